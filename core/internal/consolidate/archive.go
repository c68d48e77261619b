package consolidate

import (
	"context"
	"fmt"
	"time"

	"github.com/memos-go/memos/core/driver"
	"github.com/memos-go/memos/core/internal/govern"
)

// archiveStale archives the stale memories of the plan, 256 per
// transaction.
func (r *run) archiveStale(ctx context.Context) error {
	found := r.stale()
	for start := 0; start < len(found); start += 256 {
		batch := found[start:min(start+256, len(found))]
		if !r.rep.DryRun {
			if err := r.archive(ctx, batch); err != nil {
				return fmt.Errorf("archive: %w", err)
			}
		}
		r.rep.Archived = append(r.rep.Archived, batch...)
	}
	for _, a := range found {
		delete(r.mems, a.ID)
	}
	return nil
}

// stale lists the stale memories of the plan, by id, with why.
func (r *run) stale() []Archival {
	cutoff := r.Clock().Add(-r.cfg.StaleAfter)
	var found []Archival
	for _, id := range sortedIDs(r.mems) {
		m := r.mems[id]
		if !consolidatable(m) || m.Significance >= 7 {
			continue
		}
		used := m.LastAccessedAt
		if used.IsZero() {
			used = m.CreatedAt
		}
		switch {
		case !m.ValidTo.IsZero() && m.ValidTo.Before(cutoff):
			found = append(found, Archival{id, fmt.Sprintf("its validity ended %s", m.ValidTo.Format(time.DateOnly))})
		case m.Significance <= r.cfg.StaleSignificance && used.Before(cutoff):
			found = append(found, Archival{id, fmt.Sprintf("significance %d, last used %s", m.Significance, used.Format(time.DateOnly))})
		}
	}
	return found
}

// archive archives batch in one transaction; a memory no longer active is
// left alone.
func (r *run) archive(ctx context.Context, batch []Archival) error {
	return r.Backend.Update(ctx, func(tx driver.Tx) error {
		au := govern.NewAuditor(tx, r.Clock)
		for _, a := range batch {
			cur, err := r.Get(tx, a.ID)
			if err != nil || cur.Status != driver.StatusActive {
				continue
			}
			next := cur.Clone()
			next.Status = driver.StatusArchived
			if next.Metadata == nil {
				next.Metadata = map[string]any{}
			}
			next.Metadata[metaArchived] = "stale: " + a.Reason
			if err := r.PutVersion(tx, au, "consolidate.archive", cur, next, map[string]any{"reason": a.Reason}); err != nil {
				return err
			}
		}
		return au.Close()
	})
}
