package server_test

import (
	"net/http"
	"testing"

	"github.com/memos-go/memos/api"
	"github.com/memos-go/memos/api/server"
	"github.com/memos-go/memos/core"
)

// TestHTTPGovernance drives the review queue, lessons and forget-source
// over a real listener, as an agent would through the table.
func TestHTTPGovernance(t *testing.T) {
	l := start(t, server.Options{})
	var held core.Memory
	l.must(t, "remember", obj{"content": "The deploy key is kept in the vault", "quarantine": true, "source": "web:forum"}, &held)
	if held.Status != core.StatusQuarantined {
		t.Fatalf("remember with quarantine: status %s", held.Status)
	}
	var res core.SearchResult
	l.must(t, "search", obj{"query": "deploy key vault"}, &res)
	if len(res.Hits) != 0 {
		t.Fatalf("a quarantined memory was found: %+v", res.Hits)
	}
	var queue api.ReviewOut
	l.must(t, "review", obj{}, &queue)
	if len(queue.Items) != 1 || queue.Items[0].Memory.ID != held.ID || len(queue.Items[0].Reasons) == 0 {
		t.Fatalf("review queue: %+v", queue)
	}
	// Releasing something that is not quarantined is refused and changes nothing.
	var other core.Memory
	l.must(t, "remember", obj{"content": "Alice prefers open-source tools", "source": "chat:1"}, &other)
	if r := l.call(t, "quarantine-release", "", obj{"id": other.ID}, nil); r.status != http.StatusBadRequest {
		t.Fatalf("release of an active memory: %d %s", r.status, r.body)
	}
	var released core.Memory
	l.must(t, "quarantine-release", obj{"id": held.ID, "trust": "certain", "note": "checked"}, &released)
	if released.Status != core.StatusActive || released.Trust.Level != core.TrustCertain {
		t.Fatalf("released: %+v", released)
	}
	l.must(t, "search", obj{"query": "deploy key vault"}, &res)
	if len(res.Hits) != 1 || res.Hits[0].Memory.ID != held.ID {
		t.Fatalf("search after release: %+v", res.Hits)
	}

	var lesson core.Lesson
	l.must(t, "learn", obj{"guidance": "run the tests before pushing", "when": "before a release"}, &lesson)
	var after core.Lesson
	l.must(t, "lesson-outcome", obj{"id": lesson.Memory.ID, "success": true, "note": "caught a bug"}, &after)
	if after.Successes != 1 || after.Score <= lesson.Score {
		t.Fatalf("lesson after a success: %+v (was %+v)", after, lesson)
	}
	var shown core.Lesson
	l.must(t, "lesson", obj{"id": lesson.Memory.ID}, &shown)
	if shown.Successes != 1 || shown.When != "before a release" || shown.Memory.ID != lesson.Memory.ID {
		t.Fatalf("lesson: %+v", shown)
	}
	var lessons api.LessonsOut
	l.must(t, "lessons", obj{}, &lessons)
	if len(lessons.Lessons) != 1 {
		t.Fatalf("lessons: %+v", lessons)
	}
	if r := l.call(t, "lesson-outcome", "", obj{"id": other.ID, "success": true}, nil); r.status != http.StatusBadRequest {
		t.Fatalf("an outcome for a memory that is no lesson: %d %s", r.status, r.body)
	}

	var derived core.Memory
	l.must(t, "remember", obj{"content": "Alice likes free software", "derived_from": []int64{other.ID}}, &derived)
	var dry core.ForgetSourceReport
	l.must(t, "forget-source", obj{"source": "chat:1", "dry_run": true}, &dry)
	var got core.Memory
	l.must(t, "get", obj{"id": other.ID}, &got)
	var gone core.ForgetSourceReport
	l.must(t, "forget-source", obj{"source": "chat:1", "reason": "user asked"}, &gone)
	if r := l.call(t, "get", "", obj{"id": other.ID}, nil); r.status != http.StatusNotFound {
		t.Fatalf("get after forget-source: %d", r.status)
	}
	if r := l.call(t, "get", "", obj{"id": derived.ID}, nil); r.status != http.StatusNotFound {
		t.Fatalf("the derived memory survived forget-source: %d", r.status)
	}
	if r := l.call(t, "forget-source", "", obj{"source": ""}, nil); r.status != http.StatusBadRequest {
		t.Fatalf("forget-source of an empty source: %d", r.status)
	}
	var audit core.AuditReport
	l.must(t, "audit-verify", obj{}, &audit)
	if audit.Entries < 5 || audit.BrokenEntry != 0 {
		t.Fatalf("audit: %+v", audit)
	}
}
