package core_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memos-go/memos/core"
	"github.com/memos-go/memos/core/provider/extract"
)

func openCapture(t *testing.T, x core.Extractor) *core.Engine {
	t.Helper()
	e := openAt(t, filepath.Join(t.TempDir(), "memory.db"), core.Options{Extractor: x})
	t.Cleanup(func() { e.Close() })
	return e
}

func rules(t *testing.T) core.Extractor {
	t.Helper()
	x, err := extract.OpenRules(context.Background(), extract.RulesConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return x
}

var captureDay = time.Date(2023, 5, 8, 0, 0, 0, 0, time.UTC)

func TestCapture(t *testing.T) {
	ctx := context.Background()
	e := openCapture(t, rules(t))
	turns := []core.Turn{
		{Speaker: "Caroline", Text: "I went to the LGBTQ support group yesterday.", Time: captureDay},
		{Speaker: "Melanie", Text: "Nice. I love painting landscapes with my kids.", Time: captureDay},
		{Speaker: "Caroline", Text: "Sounds fun!", Time: captureDay},
	}
	res, err := e.Capture(ctx, core.CaptureRequest{Session: "chat-42", Turns: turns})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Turns) != 3 || res.NewTurns != 3 || len(res.Memories) != 2 {
		t.Fatalf("capture: %+v", res)
	}
	turn, err := e.Get(ctx, res.Turns[1])
	if err != nil {
		t.Fatal(err)
	}
	if turn.Content != "Melanie: Nice. I love painting landscapes with my kids." || turn.Type != core.TypeTurn ||
		turn.Pool != core.PoolRaw || turn.Session != "chat-42" || !turn.ValidFrom.Equal(captureDay) || turn.Source != "session:chat-42#turn-2" {
		t.Fatalf("turn stored as %+v", turn)
	}
	m := res.Memories[1]
	if m.Pool != core.PoolMemory || m.Trust.Level != core.TrustInferred || m.Source != "session:chat-42" || m.Session != "chat-42" ||
		!strings.Contains(m.Content, "Melanie") || m.Significance < 1 {
		t.Fatalf("extracted memory %+v", m)
	}
	edges, err := e.Edges(ctx, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(edges) != 1 || edges[0].Type != core.EdgeDerivedFrom || edges[0].To != res.Turns[1] {
		t.Fatalf("edges of the extracted memory: %+v", edges)
	}
	// The extracted memory answers the question, citing its turn.
	sr, err := e.Search(ctx, core.SearchRequest{Query: "what does melanie like", Pools: []core.Pool{core.PoolMemory}})
	if err != nil {
		t.Fatal(err)
	}
	if len(sr.Hits) == 0 || sr.Hits[0].Memory.ID != m.ID {
		t.Fatalf("search: %+v", sr.Hits)
	}

	// Capturing the same turns again stores nothing; a grown conversation
	// stores only the new turn and what it says.
	again, err := e.Capture(ctx, core.CaptureRequest{Session: "chat-42", Turns: turns})
	if err != nil {
		t.Fatal(err)
	}
	if again.NewTurns != 0 || len(again.Memories) != 0 || again.Turns[1] != res.Turns[1] {
		t.Fatalf("second capture: %+v", again)
	}
	grown := append(turns, core.Turn{Speaker: "Melanie", Text: "My sister Jane lives in Boston now.", Time: captureDay})
	more, err := e.Capture(ctx, core.CaptureRequest{Session: "chat-42", Turns: grown})
	if err != nil {
		t.Fatal(err)
	}
	if more.NewTurns != 1 || len(more.Memories) != 1 || more.Memories[0].Type != core.TypeRelationship {
		t.Fatalf("grown capture: %+v", more)
	}
	if last, _ := e.Get(ctx, more.Turns[3]); last.Source != "session:chat-42#turn-4" {
		t.Fatalf("the fourth turn's source is %q", last.Source)
	}
	// The same turns in another session are another conversation.
	other, err := e.Capture(ctx, core.CaptureRequest{Session: "chat-43", Turns: turns[:1]})
	if err != nil || other.NewTurns != 1 {
		t.Fatalf("another session: %+v, %v", other, err)
	}
}

// badExtractor names a turn that does not exist.
type badExtractor struct{}

func (badExtractor) Extract(context.Context, []core.Turn) ([]core.Extraction, error) {
	return []core.Extraction{{Content: "x", Type: core.TypeFact, Turns: []int{5}}}, nil
}

func TestCaptureBadInputStoresNothing(t *testing.T) {
	ctx := context.Background()
	e := openCapture(t, badExtractor{})
	ok := []core.Turn{{Speaker: "A", Text: "hello there"}}
	for _, c := range []struct {
		req  core.CaptureRequest
		want string
	}{
		{core.CaptureRequest{Turns: ok}, "session"},
		{core.CaptureRequest{Session: "s"}, "at least one turn"},
		{core.CaptureRequest{Session: "s", Turns: []core.Turn{{Speaker: "A", Text: "  "}}}, "turn 1 has no text"},
		{core.CaptureRequest{Session: "s", Turns: ok}, "names turn 5 of 1"},
	} {
		if _, err := e.Capture(ctx, c.req); !errors.Is(err, core.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("capture %+v: %v, want an invalid-input error about %q", c.req, err, c.want)
		}
	}
	if st, _ := e.Stats(ctx); st.Memories != 0 {
		t.Fatalf("rejected captures stored %d memories", st.Memories)
	}
	// Without an extractor (or with NoExtract) only the turns are stored.
	plain := openCapture(t, nil)
	res, err := plain.Capture(ctx, core.CaptureRequest{Session: "s", Turns: ok})
	if err != nil || res.NewTurns != 1 || len(res.Memories) != 0 {
		t.Fatalf("capture without an extractor: %+v, %v", res, err)
	}
}
