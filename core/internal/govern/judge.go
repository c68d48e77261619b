package govern

import (
	"errors"
	"fmt"
	"slices"

	"github.com/memos-go/memos/core/driver"
)

// Conflict is a memory a new one contradicts.
type Conflict struct {
	ID  int64
	Why string
	// Trusted: the policy counts the older memory as trusted (Trusted).
	Trusted bool
	// Stated: the writer named it; otherwise the detector found it.
	Stated bool
	// Demote: the policy demotes it (its trust falls to contradicted).
	Demote bool
}

// Verdict is the policy's decision on a new memory.
type Verdict struct {
	// Reasons say why it waits for review (none: it does not).
	Reasons []string
	// Conflicts are the memories it contradicts, those the writer named
	// first.
	Conflicts []Conflict
}

// Judge decides on the new memory m, which the writer asks to hold for
// review (held) and says contradicts the memories stated: the quarantine
// policy's reasons, then those of the contradiction policy over stated and
// over the detector's candidates near (Candidates). get reads a memory the
// writer names, in its scope (its error names the id); may reports whether
// the writer may change a memory. A trusted memory the writer may not
// change is never demoted: with the demote policy the newcomer waits for
// review instead.
func (p *Policy) Judge(tx driver.ReadTx, m *driver.Memory, held bool, stated, near []int64,
	get func(int64) (*driver.Memory, error), may func(*driver.Memory) bool) (*Verdict, error) {
	v := &Verdict{Reasons: p.Reasons(m)}
	if held {
		v.Reasons = append([]string{"asked for review"}, v.Reasons...)
	}
	kept := map[int64]bool{}
	for _, id := range stated {
		old, err := get(id)
		if err != nil {
			return nil, fmt.Errorf("contradicts %d: %w", id, err)
		}
		kept[id] = !may(old)
		v.Conflicts = append(v.Conflicts, Conflict{ID: id, Why: "stated by the writer", Trusted: p.Trusted(old), Stated: true})
	}
	for _, id := range near {
		if slices.Contains(stated, id) {
			continue
		}
		old, err := tx.Get(id, 0)
		if errors.Is(err, driver.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if why := p.Contradiction(m, old); why != "" {
			kept[id] = !may(old)
			v.Conflicts = append(v.Conflicts, Conflict{ID: id, Why: why, Trusted: p.Trusted(old)})
		}
	}
	for i := range v.Conflicts {
		c := &v.Conflicts[i]
		if c.Trusted && (p.Contradictions == ContradictQuarantine || p.Contradictions == ContradictDemote && kept[c.ID]) {
			v.Reasons = append(v.Reasons, fmt.Sprintf("contradicts trusted memory %d: %s", c.ID, c.Why))
		}
		c.Demote = c.Trusted && p.Contradictions == ContradictDemote && !kept[c.ID]
	}
	return v, nil
}

// Detail is what the audit entries of the new memory record of its
// conflicts (nil: none).
func (v *Verdict) Detail() []map[string]any {
	var out []map[string]any
	for _, c := range v.Conflicts {
		out = append(out, map[string]any{"id": c.ID, "why": c.Why, "trusted": c.Trusted})
	}
	return out
}
