package backendtest

import (
	"fmt"
	"reflect"
	"sort"

	"github.com/memos-go/memos/core/driver"
)

// declaring lists the backend interfaces, most specific first. A method is
// named after the first interface here that has it, so embedded interfaces
// keep their own names ("KeywordIndex.SearchKeyword", "ChangeLog.Seq",
// "ReadTx.Get", "Tx.Insert").
var declaring = []reflect.Type{
	reflect.TypeFor[driver.KeywordIndex](),
	reflect.TypeFor[driver.ChangeLog](),
	reflect.TypeFor[driver.GraphWriter](),
	reflect.TypeFor[driver.ReadTx](),
	reflect.TypeFor[driver.Tx](),
	reflect.TypeFor[driver.Backend](),
	reflect.TypeFor[driver.AuditReader](),
	reflect.TypeFor[driver.Importer](),
	reflect.TypeFor[driver.MultiGetter](),
	reflect.TypeFor[driver.MultiEdgeReader](),
	reflect.TypeFor[driver.BlobStore](),
	reflect.TypeFor[driver.SessionReader](),
	reflect.TypeFor[driver.UpdateReader](),
	reflect.TypeFor[driver.RankReader](),
	reflect.TypeFor[driver.ListReader](),
	reflect.TypeFor[driver.Counter](),
	reflect.TypeFor[driver.AuditMemoryReader](),
	reflect.TypeFor[driver.AuditTailReader](),
	reflect.TypeFor[driver.AuditBindingReader](),
	reflect.TypeFor[driver.ErasureReporter](),
}

// covered lists the interfaces whose every method, embedded ones included,
// must be claimed by a case.
var covered = []reflect.Type{
	reflect.TypeFor[driver.Backend](),
	reflect.TypeFor[driver.ReadTx](),
	reflect.TypeFor[driver.Tx](),
	reflect.TypeFor[driver.AuditReader](),
	reflect.TypeFor[driver.Importer](),
	reflect.TypeFor[driver.MultiGetter](),
	reflect.TypeFor[driver.MultiEdgeReader](),
	reflect.TypeFor[driver.BlobStore](),
	reflect.TypeFor[driver.SessionReader](),
	reflect.TypeFor[driver.UpdateReader](),
	reflect.TypeFor[driver.RankReader](),
	reflect.TypeFor[driver.ListReader](),
	reflect.TypeFor[driver.Counter](),
	reflect.TypeFor[driver.AuditMemoryReader](),
	reflect.TypeFor[driver.AuditTailReader](),
	reflect.TypeFor[driver.AuditBindingReader](),
	reflect.TypeFor[driver.ErasureReporter](),
}

// methodNames returns the qualified names of every method the suite must
// cover, sorted.
func methodNames() []string {
	set := map[string]bool{}
	for _, it := range covered {
		for i := range it.NumMethod() {
			set[qualify(it.Method(i).Name)] = true
		}
	}
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func qualify(method string) string {
	for _, it := range declaring {
		if _, ok := it.MethodByName(method); ok {
			return it.Name() + "." + method
		}
	}
	panic("backendtest: no declaring interface has method " + method)
}

// coverageGaps returns one message per interface method no case claims and
// per claim that names no method.
func coverageGaps(cs []testCase) []string {
	claimed := map[string]bool{}
	var msgs []string
	known := map[string]bool{}
	for _, n := range methodNames() {
		known[n] = true
	}
	for _, c := range cs {
		for _, m := range c.covers {
			if !known[m] {
				msgs = append(msgs, fmt.Sprintf("case %s claims %s, which is not a backend interface method", c.name, m))
			}
			claimed[m] = true
		}
	}
	for _, n := range methodNames() {
		if !claimed[n] {
			msgs = append(msgs, fmt.Sprintf("no conformance case covers %s; add one to the cases list", n))
		}
	}
	return msgs
}
