package govern

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/memos-go/memos/core/driver"
)

// ReviewItem is a memory waiting in the review queue, with why the policy
// held it and the memories it would contradict.
type ReviewItem struct {
	Memory  *driver.Memory `json:"memory"`
	Reasons []string       `json:"reasons"`
	// Contradicts lists the memories joined to it by a contradicts edge.
	Contradicts []ContradictedMemory `json:"contradicts,omitempty"`
}

// ContradictedMemory is the other side of a contradiction.
type ContradictedMemory struct {
	ID      int64        `json:"id"`
	Content string       `json:"content,omitempty"` // "" when it is out of scope
	Trust   driver.Trust `json:"trust"`
	Why     string       `json:"why,omitempty"`
}

// ReviewRange selects a page of the review queue, which is in id order:
// the memories whose id is above After, at most Limit of them (0: all).
type ReviewRange struct {
	After int64
	Limit int
}

// Review lists, through tx, the quarantined memories of namespaces nss in
// r, oldest first, each with the reasons recorded when it was quarantined
// (its latest quarantine audit entry's) and the memories it contradicts;
// readable says whether the caller may read a contradicted memory's
// content. next is the id to pass as After for the page after, 0 when none
// follows. Only the page's memories are looked up further.
func Review(ctx context.Context, tx driver.ReadTx, nss []string, readable func(*driver.Memory) bool, r ReviewRange) (items []ReviewItem, next int64, err error) {
	var ms []*driver.Memory
	collect := func(m *driver.Memory) error {
		ms = append(ms, m)
		return ctx.Err()
	}
	quarantined := []driver.Status{driver.StatusQuarantined}
	if lr, ok := tx.(driver.ListReader); ok {
		// The list index reads the quarantined memories alone, not the
		// whole scope.
		err = lr.List(driver.ListOptions{Order: driver.ListRecent, Namespaces: nss, Statuses: quarantined}, collect)
		slices.SortFunc(ms, func(a, b *driver.Memory) int { return cmp.Compare(a.ID, b.ID) })
	} else {
		opts := driver.ScanOptions{AfterID: r.After, Filter: driver.Filter{Namespaces: nss, Statuses: quarantined}}
		if r.Limit > 0 {
			opts.Limit = r.Limit + 1 // one more says whether a page follows
		}
		err = tx.Scan(opts, collect)
	}
	if err != nil {
		return nil, 0, err
	}
	from, _ := slices.BinarySearchFunc(ms, r.After+1, func(m *driver.Memory, id int64) int { return cmp.Compare(m.ID, id) })
	ms = ms[from:]
	if r.Limit > 0 && len(ms) > r.Limit {
		ms = ms[:r.Limit]
		next = ms[len(ms)-1].ID
	}
	items = make([]ReviewItem, len(ms))
	if len(items) == 0 {
		return items, 0, nil
	}
	byID := map[int64]int{}
	for i, m := range ms {
		byID[m.ID] = i
		items[i] = ReviewItem{Memory: m, Reasons: []string{}}
	}
	// The latest quarantine decision of each memory says why.
	reasons := func(a driver.AuditEntry) error {
		i, ok := byID[a.MemoryID]
		if !ok || a.Action != "quarantine" {
			return nil
		}
		var d struct {
			Reasons []string `json:"reasons"`
		}
		if json.Unmarshal([]byte(a.Detail), &d) == nil && d.Reasons != nil {
			items[i].Reasons = d.Reasons
		}
		return nil
	}
	if ar, ok := tx.(driver.AuditMemoryReader); ok {
		// Each memory's own entries, through the backend's index.
		for _, m := range ms {
			if err := ar.AuditOf(m.ID, reasons); err != nil {
				return nil, 0, err
			}
		}
	} else if err := Read(tx, reasons); err != nil {
		return nil, 0, err
	}
	for i := range items {
		if err := contradicted(tx, &items[i], readable); err != nil {
			return nil, 0, err
		}
	}
	return items, next, nil
}

// contradicted fills it.Contradicts from its contradicts edges.
func contradicted(tx driver.ReadTx, it *ReviewItem, readable func(*driver.Memory) bool) error {
	edges, err := tx.Edges(it.Memory.ID)
	if err != nil {
		return err
	}
	for _, ed := range edges {
		if ed.Type != driver.EdgeContradicts {
			continue
		}
		other := ed.From + ed.To - it.Memory.ID
		cm := ContradictedMemory{ID: other, Why: ed.Source}
		if m, err := tx.Get(other, 0); err == nil {
			cm.Trust = m.Trust
			if readable(m) {
				cm.Content = m.Content
			}
		} else if !errors.Is(err, driver.ErrNotFound) {
			return err
		}
		it.Contradicts = append(it.Contradicts, cm)
	}
	if len(it.Reasons) == 0 {
		it.Reasons = []string{"status set to quarantined"}
	}
	return nil
}
