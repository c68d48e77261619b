// Package backendtest is the conformance suite every memos storage backend
// must pass. It tests the contracts written on driver.Backend, driver.ReadTx,
// driver.Tx and the optional driver.AuditReader, so that the engine can rely on
// the same semantics whichever backend a user picks.
//
// A backend's whole conformance test is a harness and one call:
//
//	func TestConformance(t *testing.T) {
//		backendtest.Run(t, backendtest.Harness{
//			Name: "sqlite",
//			Open: func(t testing.TB, path string) (driver.Backend, error) {
//				return sqlite.Open(context.Background(), sqlite.Config{Path: path})
//			},
//		})
//	}
//
// Run executes an explicit list of cases, each in a fresh store, and after
// every case checks the store's invariants: the record set, the change log and
// the keyword index agree, forgotten memories are gone everywhere, and no edge
// dangles. A capability a backend offers (such as driver.AuditReader) is tested
// like any other; it is a failure, not a skip, when it misbehaves. The suite
// also fails when a method of the backend interfaces has no case claiming to
// cover it, so growing an interface means growing the suite.
//
// # Readings of the contract
//
// Where core/driver/backend.go leaves room, the suite takes the reading a user
// would expect:
//   - A nil Filter slice places no restriction; a non-nil empty one matches
//     nothing. A nil Filter includes every status.
//   - Times come back as the same instant, in UTC, with nanoseconds;
//     float32 and float64 values come back bit for bit; metadata comes back
//     deep-equal when it holds JSON types (string, float64, bool, nil,
//     []any, map[string]any).
//   - Changes(since) is strictly after since; entries of one transaction
//     may share a Seq. Seq grows with every committed write except Touch:
//     Insert, Put, Delete, Link, Unlink, SetMeta and AppendAudit.
//   - Get(id, current version) equals Get(id, 0), access statistics aside;
//     History's last entry is the current version.
//   - A transaction reads its own writes.
//   - Edges belong to memories, not versions: Put keeps them.
//   - NEAR with three or more groups is checked only at distances where
//     "between consecutive groups" (query.Near) and FTS5's "between the
//     first and the last group" agree.
//   - An Update cancelled while fn runs either commits everything and
//     returns nil, or returns an error wrapping context.Canceled and writes
//     nothing.
//   - Close of a closed backend returns ErrClosed, like every other method.
//   - After Delete and Close, no file of the store contains the deleted
//     content or its words (forgetting leaves no content bytes).
package backendtest

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/longtest"
	"github.com/memos-go/memos/core/query"
)

// Harness tells the suite how to open a backend.
type Harness struct {
	// Name identifies the backend in test output.
	Name string
	// Open opens, creating it when missing, the store at path: a file or
	// directory path inside a t.TempDir() that does not exist before the first
	// call. The suite closes what Open returns and reopens the same path to
	// test persistence. Cases run one after another.
	Open func(t testing.TB, path string) (driver.Backend, error)
	// Exclusive says the backend opens a store in one handle at a time (bolt
	// locks its file): a second Open waits for the first handle's Close, or
	// gives up with an error wrapping driver.ErrUnavailable. When false, the
	// suite opens several handles on one store at once and writes through
	// all of them, as several processes would.
	Exclusive bool
}

// testCase is one conformance case. covers names the interface methods the
// case exercises ("ReadTx.Get", "Tx.Insert"); see methodNames.
type testCase struct {
	name   string
	covers []string
	run    func(t *testing.T, f *fixture)
}

// cases is the explicit list of conformance cases, in the order they run.
var cases = []testCase{
	{"CRUD", []string{"Backend.Update", "Backend.View", "Tx.Insert", "ReadTx.Get"}, testCRUD},
	{"Versions", []string{"Tx.Put", "ReadTx.History", "ReadTx.Get"}, testVersions},
	{"VersionsShareUnchanged", []string{"Tx.Put", "ReadTx.History", "ReadTx.Get", "Backend.Close"}, testVersionsShareUnchanged},
	{"IDsNeverReused", []string{"Tx.Insert", "Tx.Delete"}, testIDsNeverReused},
	{"Delete", []string{"Tx.Delete", "GraphWriter.Link", "ReadTx.Edges", "ChangeLog.Changes", "KeywordIndex.SearchKeyword"}, testDelete},
	{"DeleteScrubsFiles", []string{"Tx.Delete", "Backend.Close"}, testDeleteScrubsFiles},
	{"ErasureReport", []string{"ErasureReporter.Erasure", "Tx.Delete"}, testErasureReport},
	{"Touch", []string{"Tx.Touch", "ChangeLog.Seq"}, testTouch},
	{"Scan", []string{"ReadTx.Scan"}, testScan},
	{"KeywordOperators", []string{"KeywordIndex.SearchKeyword"}, testKeywordOperators},
	{"KeywordNormalization", []string{"KeywordIndex.SearchKeyword"}, testKeywordNormalization},
	{"KeywordScripts", []string{"KeywordIndex.SearchKeyword"}, testKeywordScripts},
	{"KeywordFilter", []string{"KeywordIndex.SearchKeyword"}, testKeywordFilter},
	{"KeywordRanking", []string{"KeywordIndex.SearchKeyword"}, testKeywordRanking},
	{"KeywordCurrentVersion", []string{"KeywordIndex.SearchKeyword", "Tx.Put"}, testKeywordCurrentVersion},
	{"KeywordInvalid", []string{"KeywordIndex.SearchKeyword"}, testKeywordInvalid},
	{"Edges", []string{"GraphWriter.Link", "GraphWriter.Unlink", "ReadTx.Edges"}, testEdges},
	{"ChangeLog", []string{"ChangeLog.Seq", "ChangeLog.Changes"}, testChangeLog},
	{"Meta", []string{"ReadTx.Meta", "Tx.SetMeta"}, testMeta},
	{"Audit", []string{"Tx.AppendAudit", "AuditReader.Audit"}, testAudit},
	{"Import", []string{"Importer.InsertAt", "Importer.ReserveIDs"}, testImport},
	{"GetMany", []string{"MultiGetter.GetMany"}, testGetMany},
	{"EdgesMany", []string{"MultiEdgeReader.EdgesMany", "ReadTx.Edges"}, testEdgesMany},
	{"Blobs", []string{"BlobStore.ReadBlob", "BlobStore.WriteBlob", "BlobStore.DeleteBlob"}, testBlobs},
	{"IndexedReaders", []string{"SessionReader.Session", "UpdateReader.UpdatedAfter", "RankReader.Ranked", "Tx.Touch", "Tx.Put", "Tx.Delete"}, testIndexedReaders},
	{"RankedPages", []string{"RankReader.Ranked"}, testRankedPages},
	{"List", []string{"ListReader.List", "Tx.Put", "Tx.Delete"}, testList},
	{"ListPages", []string{"ListReader.List"}, testListPages},
	{"Count", []string{"Counter.Count", "Counter.CountEdges", "Tx.Put", "Tx.Delete"}, testCount},
	{"AuditOf", []string{"AuditMemoryReader.AuditOf", "Tx.AppendAudit"}, testAuditOf},
	{"AuditBound", []string{"AuditBindingReader.AuditBound", "Tx.AppendAudit"}, testAuditBound},
	{"AuditBefore", []string{"AuditTailReader.AuditBefore", "Tx.AppendAudit"}, testAuditBefore},
	{"QuarantineVisibility", []string{"KeywordIndex.SearchKeyword", "ReadTx.Scan", "Tx.Put", "ChangeLog.Changes"}, testQuarantineVisibility},
	{"DeleteDerivedCycle", []string{"Tx.Delete", "GraphWriter.Link", "ReadTx.Edges"}, testDeleteDerivedCycle},
	{"AuditCoverage", []string{"Tx.AppendAudit", "AuditReader.Audit", "Tx.Delete"}, testAuditCoverage},
	{"Atomicity", []string{"Backend.Update"}, testAtomicity},
	{"Reopen", []string{"Backend.Close"}, testReopen},
	{"CanceledContext", []string{"Backend.View", "Backend.Update", "KeywordIndex.SearchKeyword"}, testCanceledContext},
	{"UseAfterClose", []string{"Backend.Close", "Backend.View", "Backend.Update", "KeywordIndex.SearchKeyword"}, testUseAfterClose},
	{"Concurrency", []string{"Backend.View", "Backend.Update", "KeywordIndex.SearchKeyword"}, testConcurrency},
	{"TxAfterReturn", []string{"Backend.Update", "Backend.View", "ReadTx.Get", "Tx.Insert", "Tx.SetMeta"}, testTxAfterReturn},
	{"UpdatePanic", []string{"Backend.Update"}, testUpdatePanic},
	{"ConsolidationMerge", []string{"Tx.Put", "Tx.Touch", "GraphWriter.Link", "ChangeLog.Changes"}, testConsolidationMerge},
	{"ConsolidationPageRefresh", []string{"Tx.Put", "GraphWriter.Link", "GraphWriter.Unlink"}, testConsolidationPageRefresh},
	{"ConcurrentHandles", []string{"Backend.Update", "Backend.View", "Backend.Close"}, testConcurrentHandles},
}

// Run runs the conformance suite against the backend h opens. Every case is
// a subtest with a fresh store, followed by the invariant check.
func Run(t *testing.T, h Harness) {
	t.Helper()
	if h.Open == nil {
		t.Fatal("backendtest: Harness.Open is nil")
	}
	t.Run("MethodCoverage", func(t *testing.T) {
		for _, msg := range coverageGaps(cases) {
			t.Error(msg)
		}
	})
	for _, c := range cases {
		if raceLong() && !slices.Contains(concurrentCases, c.name) {
			// .ci/run's race step of the long set: the kit runs whole in
			// its full-size step without -race; here the cases with
			// several goroutines, which the detector watches.
			continue
		}
		t.Run(c.name, func(t *testing.T) { runCase(t, h, c) })
	}
}

// concurrentCases are the cases Run keeps in the long set under the race
// detector (raceLong).
var concurrentCases = []string{"Concurrency", "ConcurrentHandles"}

// raceLong reports whether this is the long set under the race detector:
// .ci/run's race step, which also runs every case without -race (Full). A
// sqlite store is some 50 times slower under the detector (a 2,600-memory
// case took five minutes), and the whole kit outgrew the step's timeout.
func raceLong() bool { return longtest.Enabled() && longtest.Race }

// runCase runs c on a fresh store, then the invariant check.
func runCase(t *testing.T, h Harness, c testCase) {
	f := newFixture(t, h)
	c.run(t, f)
	if t.Failed() {
		return // the invariant check would only repeat the failure
	}
	f.checkInvariants(t)
}

// RunRegistered runs the suite against the backend registered under h.Name
// in the driver registry, opening it the way front-ends do; h.Open must be
// nil, the other fields describe the backend as for Run. The backend's config
// must have a string field for the store path: a field named Path, or one
// tagged "path" (koanf, json, yaml or mapstructure), as front-ends set the
// config key "path".
func RunRegistered(t *testing.T, h Harness) {
	t.Helper()
	if h.Open != nil {
		t.Fatal("backendtest: RunRegistered opens through the registry; leave Harness.Open nil")
	}
	name := h.Name
	d, err := driver.LookupBackend(name)
	if err != nil {
		t.Fatalf("backendtest: %v", err)
	}
	h.Open = func(_ testing.TB, path string) (driver.Backend, error) {
		cfg := d.NewConfig()
		if err := setPath(cfg, path); err != nil {
			return nil, fmt.Errorf("backendtest: config of backend %q: %w", name, err)
		}
		return d.Open(context.Background(), cfg)
	}
	// The whole suite again through the registry in the long set without
	// the race detector (.ci/run's full-size step): Run checks every case
	// under -race already, and a second pass there doubled a backend's
	// conformance time. Elsewhere, the cases that open, reopen and share a
	// store (several handles at once under -race).
	if longtest.Full() {
		Run(t, h)
		return
	}
	for _, c := range cases {
		if slices.Contains(registeredQuick, c.name) {
			t.Run(c.name, func(t *testing.T) { runCase(t, h, c) })
		}
	}
}

// registeredQuick are the cases RunRegistered runs unless longtest.Full.
var registeredQuick = []string{"CRUD", "Reopen", "ConcurrentHandles"}

// setPath stores path in the path field of cfg, a pointer to a config struct.
func setPath(cfg any, path string) error {
	v := reflect.ValueOf(cfg)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return driver.Invalidf("NewConfig returned %T, want a pointer to a struct", cfg)
	}
	s := v.Elem()
	for i := range s.NumField() {
		sf := s.Type().Field(i)
		if !sf.IsExported() || sf.Type.Kind() != reflect.String {
			continue
		}
		if isPathField(sf) {
			s.Field(i).SetString(path)
			return nil
		}
	}
	return driver.Invalidf("%T has no string field named Path or tagged \"path\"", cfg)
}

func isPathField(sf reflect.StructField) bool {
	for _, key := range []string{"koanf", "json", "yaml", "mapstructure"} {
		if name, _, _ := strings.Cut(sf.Tag.Get(key), ","); name != "" {
			return name == "path"
		}
	}
	return sf.Name == "Path"
}

// fixture is one case's store: the harness, the path and the open backend.
type fixture struct {
	h    Harness
	path string
	b    driver.Backend // nil while closed

	mu sync.Mutex
	// forgotten maps the ids deleted through f.forget to the contents they
	// had, so that the invariant check can make sure they are gone everywhere.
	forgotten map[int64][]string
}

func newFixture(t *testing.T, h Harness) *fixture {
	t.Helper()
	f := &fixture{h: h, path: filepath.Join(t.TempDir(), "store"), forgotten: map[int64][]string{}}
	f.open(t)
	t.Cleanup(func() {
		if f.b != nil {
			if err := f.b.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		}
	})
	return f
}

func (f *fixture) open(t testing.TB) {
	t.Helper()
	b, err := f.h.Open(t, f.path)
	if err != nil {
		t.Fatalf("open %s backend at %s: %v", f.h.Name, f.path, err)
	}
	if b == nil {
		t.Fatalf("open %s backend: Open returned a nil Backend and no error", f.h.Name)
	}
	f.b = b
}

// close closes the backend and fails the test when Close does.
func (f *fixture) close(t testing.TB) {
	t.Helper()
	b := f.b
	f.b = nil
	if err := b.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// reopen closes the backend and opens the same path again.
func (f *fixture) reopen(t testing.TB) {
	t.Helper()
	f.close(t)
	f.open(t)
}

// view runs fn in a read transaction and fails the test on error.
func (f *fixture) view(t testing.TB, fn func(tx driver.ReadTx) error) {
	t.Helper()
	if err := f.b.View(context.Background(), fn); err != nil {
		t.Fatalf("View: %v", err)
	}
}

// update runs fn in a write transaction and fails the test on error.
func (f *fixture) update(t testing.TB, fn func(tx driver.Tx) error) {
	t.Helper()
	if err := f.b.Update(context.Background(), fn); err != nil {
		t.Fatalf("Update: %v", err)
	}
}

// insert stores each memory in its own transaction and returns their ids.
func (f *fixture) insert(t testing.TB, ms ...*driver.Memory) []int64 {
	t.Helper()
	ids := make([]int64, len(ms))
	for i, m := range ms {
		f.update(t, func(tx driver.Tx) error { return tx.Insert(m) })
		ids[i] = m.ID
	}
	return ids
}

// get returns version v of id (0: current) and fails the test on error.
func (f *fixture) get(t testing.TB, id int64, v int) *driver.Memory {
	t.Helper()
	var m *driver.Memory
	f.view(t, func(tx driver.ReadTx) error {
		var err error
		m, err = tx.Get(id, v)
		return err
	})
	return m
}

// put stores m as the next version of its memory.
func (f *fixture) put(t testing.TB, m *driver.Memory) {
	t.Helper()
	f.update(t, func(tx driver.Tx) error { return tx.Put(m) })
}

// forget deletes id and remembers its content for the invariant check.
func (f *fixture) forget(t testing.TB, id int64) {
	t.Helper()
	content := f.get(t, id, 0).Content
	f.update(t, func(tx driver.Tx) error { return tx.Delete(id) })
	f.noteForgotten(id, content)
}

func (f *fixture) noteForgotten(id int64, content string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forgotten[id] = append(f.forgotten[id], content)
}

// seq returns the store's change-log sequence number.
func (f *fixture) seq(t testing.TB) uint64 {
	t.Helper()
	var s uint64
	f.view(t, func(tx driver.ReadTx) error {
		var err error
		s, err = tx.Seq()
		return err
	})
	return s
}

// changes returns the change log after since.
func (f *fixture) changes(t testing.TB, since uint64) []driver.Change {
	t.Helper()
	var cs []driver.Change
	f.view(t, func(tx driver.ReadTx) error {
		return tx.Changes(since, func(c driver.Change) error {
			cs = append(cs, c)
			return nil
		})
	})
	return cs
}

// scanIDs returns the ids Scan yields for opts.
func (f *fixture) scanIDs(t testing.TB, opts driver.ScanOptions) []int64 {
	t.Helper()
	var ids []int64
	f.view(t, func(tx driver.ReadTx) error {
		return tx.Scan(opts, func(m *driver.Memory) error {
			ids = append(ids, m.ID)
			return nil
		})
	})
	return ids
}

// edges returns the edges of id.
func (f *fixture) edges(t testing.TB, id int64) []driver.Edge {
	t.Helper()
	var es []driver.Edge
	f.view(t, func(tx driver.ReadTx) error {
		var err error
		es, err = tx.Edges(id)
		return err
	})
	return es
}

// search runs a keyword search, fails the test on error and checks that the
// hits are ordered by score, then id, and respect limit.
func (f *fixture) search(t testing.TB, q query.Node, flt driver.Filter, limit int) []driver.Hit {
	t.Helper()
	hits, err := f.b.SearchKeyword(context.Background(), q, flt, limit)
	if err != nil {
		t.Fatalf("SearchKeyword(%s): %v", describe(q), err)
	}
	if err := checkHitOrder(hits, limit); err != nil {
		t.Errorf("SearchKeyword(%s): %v", describe(q), err)
	}
	return hits
}

// searchIDs is search returning only the ids.
func (f *fixture) searchIDs(t testing.TB, q query.Node, flt driver.Filter, limit int) []int64 {
	t.Helper()
	return hitIDs(f.search(t, q, flt, limit))
}

func hitIDs(hits []driver.Hit) []int64 {
	ids := make([]int64, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	return ids
}

// checkHitOrder reports hits that are not best first with ties broken by
// ascending id, duplicated, or more than limit.
func checkHitOrder(hits []driver.Hit, limit int) error {
	if limit > 0 && len(hits) > limit {
		return fmt.Errorf("%d hits for limit %d", len(hits), limit)
	}
	seen := make(map[int64]bool, len(hits))
	for i, h := range hits {
		if seen[h.ID] {
			return fmt.Errorf("id %d returned twice in %v", h.ID, hits)
		}
		seen[h.ID] = true
		if i == 0 {
			continue
		}
		p := hits[i-1]
		if h.Score > p.Score || (h.Score == p.Score && h.ID < p.ID) {
			return fmt.Errorf("hits not ordered by score descending, then id ascending: %v", hits)
		}
	}
	return nil
}

// wantErr fails the test unless err wraps target.
func wantErr(t testing.TB, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: got error %v, want one wrapping %q", what, err, target)
	}
}
