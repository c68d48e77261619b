package console

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/memos-go/memos/api"
	"github.com/memos-go/memos/core"
)

// This file holds the pages; each runs operations of the table through
// call and renders what they answer.

// form reads a text field.
func (q *req) form(name string) string { return strings.TrimSpace(q.r.FormValue(name)) }

// formInt reads a whole-number field, def when empty or not a number.
func (q *req) formInt(name string, def int) int {
	if n, err := strconv.Atoi(q.form(name)); err == nil {
		return n
	}
	return def
}

// values reads a multi-valued field (checkboxes, multi-selects), dropping
// empty entries.
func values[T ~string](q *req, name string) []T {
	var out []T
	for _, v := range q.r.Form[name] {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, T(v))
		}
	}
	return out
}

// memLink is the path of memory m's page.
func memLink(id int64, ns string) string {
	return fmt.Sprintf("%smemory/%d?ns=%s", Prefix, id, url.QueryEscape(ns))
}

type browseData struct {
	In       api.ListIn
	Memories []*core.Memory
	Next     string
	Prev     string
	First    string
	Stats    *core.Stats
	// Facets asks for the counts per facet; FacetsLink is the page with them.
	Facets     bool
	FacetsLink string
	Pools      []core.Pool
	Types      []core.Type
	Statuses   []core.Status
	Trusts     []core.TrustLevel
}

func (q *req) browse() {
	q.r.ParseForm()
	in := api.ListIn{Scope: api.Scope{Namespace: q.ns()}, NamespaceOnly: q.form("namespace_only") != "",
		Pools: values[core.Pool](q, "pool"), Types: values[core.Type](q, "type"), Statuses: values[core.Status](q, "status"),
		Trust: values[core.TrustLevel](q, "trust"), SourcePrefix: q.form("source"), Entity: q.form("entity"),
		CreatedAfter: q.form("created_after"), CreatedBefore: q.form("created_before"),
		UpdatedAfter: q.form("updated_after"), UpdatedBefore: q.form("updated_before"),
		ValidAfter: q.form("valid_after"), ValidBefore: q.form("valid_before"),
		Sort: q.form("sort"), Limit: q.formInt("limit", 25), Cursor: q.form("cursor")}
	d := &browseData{In: in, Facets: q.form("facets") != "", Pools: core.Pools, Types: core.Types, Statuses: core.Statuses, Trusts: core.TrustLevels}
	p := q.page("Browse", "browse", d)
	res, err := call[core.ListResult](q, "list", &in)
	if err == nil {
		d.Memories = res.Memories
		d.First, d.Prev, d.Next = q.pageLinks(Prefix, "cursor", in.Cursor, res.NextCursor)
		if d.Facets {
			// Only on request: every backend counts without reading the
			// memories, but the page is shorter without the counts.
			d.Stats, err = call[core.Stats](q, "stats", &api.Empty{Scope: in.Scope})
		} else {
			v := q.r.URL.Query()
			v.Set("facets", "1")
			d.FacetsLink = Prefix + "?" + v.Encode()
		}
	}
	q.show("browse", p, err)
}

// The trail is the cursors of the pages a person paged through before the
// one shown, oldest first, joined by trailSep (which no cursor holds), so
// that "Previous page" retraces them. It keeps the last maxTrail: further
// back, "Previous page" leads to the first page.
const (
	trailSep = "."
	maxTrail = 100
)

// pageLinks returns the links to the first, previous and next pages of a
// listing paged by keys: the query parameter param names a page by its key
// (cur is this page's, "" on the first; next the next page's, "" when none
// follows). A key leads forward only; the trail of the keys of the pages
// before leads back.
func (q *req) pageLinks(path, param, cur, next string) (first, prev, nextLink string) {
	trail := trailOf(q.form("trail"))
	link := func(key string, trail []string) string {
		v := q.r.URL.Query()
		v.Del(param)
		v.Del("trail")
		if key != "" {
			v.Set(param, key)
		}
		if len(trail) > 0 {
			v.Set("trail", strings.Join(trail, trailSep))
		}
		return path + "?" + v.Encode()
	}
	if next != "" {
		nt := trail
		if cur != "" {
			nt = append(slices.Clip(trail), cur)
		}
		nextLink = link(next, nt[max(0, len(nt)-maxTrail):])
	}
	if cur != "" {
		first = link("", nil)
		if n := len(trail); n > 0 {
			prev = link(trail[n-1], trail[:n-1])
		} else {
			prev = first
		}
	}
	return first, prev, nextLink
}

// trailOf reads a trail, dropping empty entries.
func trailOf(s string) []string {
	var out []string
	for _, c := range strings.Split(s, trailSep) {
		if c != "" {
			out = append(out, c)
		}
	}
	return out
}

type searchData struct {
	In       api.SearchIn
	Explain  *core.Explanation
	Hits     []hitView
	Dropped  []core.CandidateExplanation
	Modes    []string
	Searched bool
}

type hitView struct {
	Hit core.Result
	Why *core.CandidateExplanation
}

func (q *req) search() {
	q.r.ParseForm()
	in := api.SearchIn{Scope: api.Scope{Namespace: q.ns()}, Query: q.form("q"), Mode: q.form("mode"),
		Limit: q.formInt("limit", 10), NoExpand: q.form("no_expand") != "",
		Filters: api.Filters{Pools: values[core.Pool](q, "pool"), ValidAt: q.form("valid_at"), AsOf: q.form("as_of"),
			ReferenceTime: q.form("reference_time"), MMR: q.form("mmr") != ""}}
	d := &searchData{In: in, Modes: []string{"hybrid", "keyword", "vector", "fts"}}
	p := q.page("Search", "search", d)
	if in.Query == "" {
		q.show("search", p, nil)
		return
	}
	d.Searched = true
	out, err := call[api.ExplainOut](q, "explain", &in)
	if err == nil {
		x := out.Explanation
		d.Explain = x
		byID := map[int64]*core.CandidateExplanation{}
		for i := range x.Candidates {
			c := &x.Candidates[i]
			byID[c.ID] = c
			if c.Rank == 0 {
				d.Dropped = append(d.Dropped, *c)
			}
		}
		if x.Result != nil {
			for _, h := range x.Result.Hits {
				d.Hits = append(d.Hits, hitView{Hit: h, Why: byID[h.Memory.ID]})
			}
		}
	}
	q.show("search", p, err)
}

type memoryData struct {
	Memory   *core.Memory
	Versions []*core.Memory
	Edges    []edgeView
	Trace    *core.TraceResult
	Audit    []auditView
	// AuditHidden says why the audit entries are not shown (a token
	// limited to namespaces may not read the store-wide log).
	AuditHidden string
	A, B        *core.Memory
	Diff        []segment
	Changes     []change
	Trusts      []core.TrustLevel
}

type edgeView struct {
	core.Edge
	Out   bool
	Other int64
}

func (q *req) memory(rest string) {
	idText, action, _ := strings.Cut(rest, "/")
	id, err := strconv.ParseInt(idText, 10, 64)
	if err != nil || id < 1 {
		q.fail(core.Invalidf("%q is not a memory id: memory ids are whole numbers from 1", idText))
		return
	}
	ns := q.ns()
	sc := api.Scope{Namespace: ns}
	if action == "revert" && q.r.Method == "POST" {
		v := q.formInt("version", 0)
		m, err := call[core.Memory](q, "revert", &api.RevertIn{Scope: sc, ID: id, Version: v})
		if err != nil {
			q.fail(err)
			return
		}
		q.done(memLink(id, ns), fmt.Sprintf("Memory %d reverted to version %d: it is now version %d.", id, v, m.Version))
		return
	}
	if action != "" {
		q.fail(fmt.Errorf("%w: no console page %s", core.ErrNotFound, q.r.URL.Path))
		return
	}
	d := &memoryData{Trusts: core.TrustLevels}
	p := q.page(fmt.Sprintf("Memory %d", id), "browse", d)
	d.Memory, err = call[core.Memory](q, "get", &api.IDIn{Scope: sc, ID: id})
	if err != nil {
		q.show("memory", p, err)
		return
	}
	p.Title = fmt.Sprintf("Memory %d", id)
	var vs *api.VersionsOut
	if vs, err = call[api.VersionsOut](q, "history", &api.HistoryIn{Scope: sc, ID: id}); err == nil {
		d.Versions = vs.Versions
		var es *api.EdgesOut
		if es, err = call[api.EdgesOut](q, "edges", &api.HistoryIn{Scope: sc, ID: id}); err == nil {
			for _, e := range es.Edges {
				ev := edgeView{Edge: e, Out: e.From == id, Other: e.To}
				if !ev.Out {
					ev.Other = e.From
				}
				d.Edges = append(d.Edges, ev)
			}
			d.Trace, err = call[core.TraceResult](q, "trace", &api.TraceIn{Scope: sc, ID: id, MaxDepth: 5, MaxNodes: 50})
		}
	}
	if err == nil {
		var au *api.AuditOut
		au, err = call[api.AuditOut](q, "audit", &api.AuditIn{Scope: sc, MemoryID: id})
		if errors.Is(err, core.ErrForbidden) {
			d.AuditHidden, err = "The audit log covers the whole store; this token is limited to namespaces, so it may not read it.", nil
		}
		if au != nil {
			for _, a := range au.Entries {
				d.Audit = append(d.Audit, viewAudit(a, id))
			}
		}
	}
	if err == nil && len(d.Versions) > 1 {
		a, b := q.formInt("a", d.Versions[len(d.Versions)-2].Version), q.formInt("b", d.Versions[len(d.Versions)-1].Version)
		for _, v := range d.Versions {
			if v.Version == a {
				d.A = v
			}
			if v.Version == b {
				d.B = v
			}
		}
		if d.A != nil && d.B != nil {
			d.Diff = diffWords(d.A.Content, d.B.Content)
			d.Changes = changes(d.A, d.B)
		}
	}
	q.show("memory", p, err)
}

type reviewData struct {
	Items             []core.ReviewItem
	Trusts            []core.TrustLevel
	First, Prev, Next string
}

// reviewPage is how many quarantined memories a page of the review queue
// shows unless the address asks for another number (limit).
const reviewPage = 25

func (q *req) review() {
	d := &reviewData{Trusts: core.TrustLevels}
	p := q.page("Review queue", "review", d)
	after, err := strconv.ParseInt(q.form("after"), 10, 64)
	if q.form("after") == "" {
		after, err = 0, nil
	}
	if err != nil || after < 0 {
		q.show("review", p, core.Invalidf("after %q: give the id the page starts after", q.form("after")))
		return
	}
	out, err := call[api.ReviewOut](q, "review", &api.ReviewIn{Scope: api.Scope{Namespace: q.ns()}, After: after, Limit: q.formInt("limit", reviewPage)})
	if err == nil {
		d.Items = out.Items
		next := ""
		if out.Next != 0 {
			next = strconv.FormatInt(out.Next, 10)
		}
		d.First, d.Prev, d.Next = q.pageLinks(Prefix+"review", "after", q.form("after"), next)
	}
	q.show("review", p, err)
}

// decide releases or rejects the memories named by the form's id fields.
func (q *req) decide() {
	ns := q.ns()
	sc := api.Scope{Namespace: ns}
	back := Prefix + "review?ns=" + url.QueryEscape(ns)
	action := q.form("action")
	var ids []int64
	for _, s := range q.r.PostForm["id"] {
		id, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil || id < 1 {
			q.fail(core.Invalidf("%q is not a memory id", s))
			return
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		q.done(back, "Nothing was decided: tick at least one memory.")
		return
	}
	note := q.form("note")
	by := q.who()
	if note != "" {
		by += ": " + note
	}
	var done []string
	for _, id := range ids {
		var err error
		switch action {
		case "release":
			_, err = call[core.Memory](q, "quarantine-release", &api.ReleaseIn{Scope: sc, ID: id, Trust: core.TrustLevel(q.form("trust")), Note: by})
		case "reject":
			_, err = call[core.DeletionCertificate](q, "quarantine-reject", &api.RejectIn{Scope: sc, ID: id, Reason: by})
		default:
			err = core.Invalidf("action %q: use release or reject", action)
		}
		if err != nil {
			if len(done) > 0 {
				err = fmt.Errorf("%s before it; %w", strings.Join(done, ", "), err)
			}
			q.fail(err)
			return
		}
		done = append(done, fmt.Sprintf("%s %d", pastTense[action], id))
	}
	q.done(back, "Done: "+strings.Join(done, ", ")+".")
}

// pastTense names what a review action did, for the page after it.
var pastTense = map[string]string{"release": "released", "reject": "rejected"}

type healthData struct {
	Stats       *core.Stats
	Audit       *core.AuditReport
	Verify      bool
	Consolidate *core.ConsolidateReport
	// Activity is a page of the latest audit entries, newest first;
	// ActivityHidden says why there is none (a token limited to namespaces
	// may not read the store-wide log). Latest, Newer and Older lead to
	// the first page, the page after and the page before.
	Activity             []activityView
	ActivityHidden       string
	Latest, Newer, Older string
}

// activityPage is how many audit entries a page of recent activity shows.
const activityPage = 20

func (q *req) health() {
	d := &healthData{Verify: q.form("verify") != ""}
	p := q.page("Health", "health", d)
	var err error
	if q.r.Method == "POST" {
		dry := q.form("dry_run") != ""
		out, err := call[api.ConsolidateOut](q, "consolidate", &api.ConsolidateIn{Scope: api.Scope{Namespace: q.ns()}, DryRun: dry})
		if err != nil {
			q.fail(err)
			return
		}
		rep := out.ConsolidateReport
		if !dry {
			q.done(Prefix+"health?ns="+url.QueryEscape(q.ns()), fmt.Sprintf("Consolidated: %d merges, %d archived, %d knowledge pages; %d memories before, %d after.",
				len(rep.Merges), len(rep.Archived), len(rep.Pages), rep.Before, rep.After))
			return
		}
		d.Consolidate = rep // a dry run changes nothing: shown at once
	}
	d.Stats, err = call[core.Stats](q, "stats", &api.Empty{Scope: api.Scope{Namespace: q.ns()}})
	if err == nil && d.Verify {
		d.Audit, err = call[core.AuditReport](q, "audit-verify", &api.Empty{Scope: api.Scope{Namespace: q.ns()}})
	}
	if err == nil {
		err = q.activity(d)
	}
	q.show("health", p, err)
}

// activity fills d with the page of recent activity the address names:
// the latest entries, or those before the sequence number in before.
func (q *req) activity(d *healthData) error {
	var before uint64
	if s := q.form("before"); s != "" {
		var err error
		if before, err = strconv.ParseUint(s, 10, 64); err != nil || before == 0 {
			return core.Invalidf("before %q: give the sequence number of an audit entry", s)
		}
	}
	ns := q.ns()
	out, err := call[api.AuditOut](q, "audit", &api.AuditIn{Scope: api.Scope{Namespace: ns}, Last: activityPage, Before: before})
	if errors.Is(err, core.ErrForbidden) {
		d.ActivityHidden = "The audit log covers the whole store; this token is limited to namespaces, so it may not read it."
		return nil
	}
	if err != nil {
		return err
	}
	es := out.Entries
	link := func(before uint64) string {
		v := q.r.URL.Query()
		v.Del("before")
		if before != 0 {
			v.Set("before", strconv.FormatUint(before, 10))
		}
		return Prefix + "health?" + v.Encode()
	}
	if before != 0 {
		d.Latest = link(0)
		// Sequence numbers are contiguous (VerifyAudit checks it): the
		// page after this one ends activityPage entries after its end.
		if len(es) > 0 {
			d.Newer = link(es[len(es)-1].Seq + activityPage + 1)
		} else {
			d.Newer = d.Latest
		}
	}
	if len(es) == activityPage && es[0].Seq > 1 {
		d.Older = link(es[0].Seq)
	}
	for i := len(es) - 1; i >= 0; i-- {
		d.Activity = append(d.Activity, viewActivity(es[i], ns))
	}
	return nil
}

type lessonsData struct {
	Lessons  []*core.Lesson
	Archived bool
}

func (q *req) lessons() {
	ns := q.ns()
	sc := api.Scope{Namespace: ns}
	if q.r.Method == "POST" {
		id, _ := strconv.ParseInt(q.form("id"), 10, 64)
		success := q.form("success") == "true"
		l, err := call[core.Lesson](q, "lesson-outcome", &api.OutcomeIn{Scope: sc, ID: id, Success: &success, Note: q.form("note")})
		if err != nil {
			q.fail(err)
			return
		}
		q.done(Prefix+"lessons?ns="+url.QueryEscape(ns), fmt.Sprintf("Outcome recorded for lesson %d: score %.2f.", id, l.Score))
		return
	}
	d := &lessonsData{Archived: q.form("archived") != ""}
	p := q.page("Lessons", "lessons", d)
	out, err := call[api.LessonsOut](q, "lessons", &api.LessonsIn{Scope: sc, IncludeArchived: d.Archived})
	if err == nil {
		d.Lessons = out.Lessons
	}
	q.show("lessons", p, err)
}

type packData struct {
	In   api.PackIn
	Pack *core.Pack
}

func (q *req) pack() {
	in := api.PackIn{Scope: api.Scope{Namespace: q.ns()}, Query: q.form("q"), Budget: q.formInt("budget", 800),
		Bootstrap: q.form("bootstrap") != ""}
	d := &packData{In: in}
	p := q.page("Context pack", "pack", d)
	var err error
	if in.Query != "" || in.Bootstrap {
		d.Pack, err = call[core.Pack](q, "context-pack", &in)
	}
	q.show("pack", p, err)
}
