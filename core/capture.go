package core

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memos-go/memos/core/driver"
)

// CaptureRequest is a conversation (or the next part of one) to remember.
type CaptureRequest struct {
	// Session names the conversation; required. Turns and the memories
	// extracted from them carry it.
	Session string
	Turns   []Turn
	// NoExtract stores the turns only, even when the engine has an extractor.
	NoExtract bool
}

// CaptureResult says what Capture stored.
type CaptureResult struct {
	Session string `json:"session"`
	// Turns holds the id of every given turn's raw memory, in order: new or,
	// when the turn was captured before, the existing one.
	Turns    []int64   `json:"turns"`
	NewTurns int       `json:"new_turns"`
	Memories []*Memory `json:"memories"` // extracted memories stored by this call
	// Skipped counts extractions that were already stored.
	Skipped int `json:"skipped"`
}

// Metadata keys Capture writes.
const (
	metaCaptureKey = "capture_key" // identifies a captured turn or extraction within its session
)

// captureKey identifies a turn (speaker, text, time) or an extraction
// (content) within a session, so that capturing again stores nothing new.
func captureKey(session string, parts ...string) string {
	h := sha256.New()
	h.Write([]byte(session))
	for _, p := range parts {
		h.Write([]byte{0})
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))[:24]
}

// Capture stores a conversation: each turn as a raw memory (type turn,
// "speaker: text", the session, event time from the turn), then, when the
// engine has an Extractor, the memories it proposes from the new turns in
// the memory pool (trust inferred, source "session:<session>") with a
// derived_from edge to each turn they come from.
//
// Capture is idempotent: a turn already captured in the session (same
// speaker, text and time) is not stored again nor extracted from again, and
// an extraction with the same content as one stored is skipped, so that
// capturing the same turns twice stores nothing new and a conversation can
// be captured as it grows. The turns and extractions are written in one
// transaction, the edges in a second; running the capture again completes
// edges an interruption left out.
func (e *Engine) Capture(ctx context.Context, req CaptureRequest) (*CaptureResult, error) {
	const op = "capture"
	if err := e.checkOpen(op); err != nil {
		return nil, err
	}
	if err := validateCapture(req); err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	seen, n, err := capturedKeys(ctx, e.b, e.ns, req.Session)
	if err != nil {
		return nil, &Error{Op: op, Err: err}
	}
	c := planCapture(req, seen, n)
	if e.extractor != nil && !req.NoExtract && len(c.fresh) > 0 {
		if err := c.extract(ctx, e.extractor); err != nil {
			return nil, &Error{Op: op, Err: fmt.Errorf("extract: %w", err)}
		}
	}
	if len(c.ins) > 0 {
		ms, err := e.RememberBatch(ctx, c.ins)
		if err != nil {
			return nil, &Error{Op: op, Err: err}
		}
		for k, i := range c.fresh {
			c.res.Turns[i] = ms[k].ID
		}
		c.res.Memories = ms[len(c.fresh):]
	}
	for i, j := range c.dup {
		c.res.Turns[i] = c.res.Turns[j]
	}
	// Link every extraction to its turns; Link replaces an existing edge, so
	// a repeated capture also completes edges an interruption left out.
	err = e.b.Update(ctx, func(tx Tx) error { return c.link(tx, e.auditor(tx), e.clock) })
	if err != nil {
		return c.res, &Error{Op: op, Err: fmt.Errorf("link extractions to their turns: %w", err)}
	}
	return c.res, nil
}

// capture is a Capture under way: what it stores, and what it found stored.
type capture struct {
	req   CaptureRequest
	res   *CaptureResult
	seen  map[string]int64 // capture key → id of the memory stored with it
	ins   []Input          // what to store: the new turns, then extractions
	fresh []int            // indexes of new turns in req.Turns
	dup   map[int]int      // a turn repeated within this request → its first
	exts  []Extraction     // the extractions in ins, turns indexing req.Turns
}

// planCapture plans to store the turns of req not yet captured (seen), the
// session holding n turns.
func planCapture(req CaptureRequest, seen map[string]int64, n int) *capture {
	c := &capture{req: req, seen: seen, dup: map[int]int{},
		res: &CaptureResult{Session: req.Session, Turns: make([]int64, len(req.Turns))}}
	first := map[string]int{} // key → index of its first new turn in req.Turns
	for i, t := range req.Turns {
		key := captureKey(req.Session, "turn", t.Speaker, t.Text, t.Time.UTC().Format(time.RFC3339Nano))
		if id, ok := seen[key]; ok {
			c.res.Turns[i] = id
			continue
		}
		if j, ok := first[key]; ok {
			c.dup[i] = j
			continue
		}
		first[key] = i
		content := t.Text
		if t.Speaker != "" {
			content = t.Speaker + ": " + t.Text
		}
		n++
		c.ins = append(c.ins, Input{
			Content: content, Type: TypeTurn, Pool: PoolRaw, Session: req.Session,
			Source:    fmt.Sprintf("session:%s#turn-%d", req.Session, n),
			ValidFrom: t.Time, TrustLevel: TrustCertain,
			Metadata: map[string]any{metaCaptureKey: key},
		})
		c.fresh = append(c.fresh, i)
	}
	c.res.NewTurns = len(c.fresh)
	return c
}

// extract asks x for memories from the new turns and plans to store those
// not stored yet.
func (c *capture) extract(ctx context.Context, x Extractor) error {
	turns := make([]Turn, len(c.fresh))
	for k, i := range c.fresh {
		turns[k] = c.req.Turns[i]
	}
	got, err := x.Extract(ctx, turns)
	if err != nil {
		return err
	}
	for j, x := range got {
		if err := validateExtraction(x, len(turns)); err != nil {
			return fmt.Errorf("extraction %d: %w", j, err)
		}
		key := captureKey(c.req.Session, "memory", x.Content)
		if _, ok := c.seen[key]; ok {
			c.res.Skipped++
			continue
		}
		c.seen[key] = 0
		for k := range x.Turns {
			x.Turns[k] = c.fresh[x.Turns[k]] // index into req.Turns
		}
		c.exts = append(c.exts, x)
		c.ins = append(c.ins, Input{
			Content: x.Content, Type: x.Type, Entities: x.Entities, Significance: x.Significance,
			EmotionalContext: x.EmotionalContext, Session: c.req.Session, Source: "session:" + c.req.Session,
			ValidFrom: c.req.Turns[x.Turns[0]].Time, TrustLevel: TrustInferred,
			Metadata: map[string]any{metaCaptureKey: key},
		})
	}
	return nil
}

// link links every stored extraction to its turns (derived_from, created
// at clock's time) and records that provenance in one audit entry.
func (c *capture) link(tx Tx, au *auditor, clock func() time.Time) error {
	var links [][2]int64
	for k, x := range c.exts {
		for _, i := range x.Turns {
			edge := Edge{From: c.res.Memories[k].ID, To: c.res.Turns[i], Type: EdgeDerivedFrom, Weight: 1,
				CreatedAt: clock(), Source: "capture"}
			if err := tx.Link(edge); err != nil {
				return err
			}
			links = append(links, [2]int64{edge.From, edge.To})
		}
	}
	if len(links) == 0 {
		return nil
	}
	// Provenance: which extraction came from which turns.
	if _, err := au.Add("link", 0, map[string]any{"type": EdgeDerivedFrom, "source": "capture", "edges": links}); err != nil {
		return err
	}
	return au.Close()
}

func validateCapture(req CaptureRequest) error {
	if strings.TrimSpace(req.Session) == "" || !utf8.ValidString(req.Session) || len(req.Session) > 256 {
		return invalidf("a capture needs a session name (UTF-8, at most 256 bytes)")
	}
	if len(req.Turns) == 0 {
		return invalidf("a capture needs at least one turn")
	}
	for i, t := range req.Turns {
		if strings.TrimSpace(t.Text) == "" {
			return invalidf("turn %d has no text", i+1)
		}
		if !utf8.ValidString(t.Text) || !utf8.ValidString(t.Speaker) {
			return invalidf("turn %d is not valid UTF-8", i+1)
		}
		if len(t.Speaker) > 256 {
			return invalidf("turn %d: the speaker's name is %d bytes, over the limit of 256", i+1, len(t.Speaker))
		}
	}
	return nil
}

// validateExtraction checks what an extractor returned for n turns.
func validateExtraction(x Extraction, n int) error {
	if len(x.Turns) == 0 {
		return invalidf("it names no turn it was derived from")
	}
	for _, i := range x.Turns {
		if i < 0 || i >= n {
			return invalidf("it names turn %d of %d", i, n)
		}
	}
	if x.Type == TypeTurn || x.Type == TypeDocument {
		return invalidf("type %s is not a memory an extractor proposes", x.Type)
	}
	return nil
}

// capturedKeys returns the capture keys of the session's memories in
// namespace ns (key → id) and how many turns it holds. A backend that
// indexes sessions (SessionReader) lists the session's members; for any
// other, the namespace is scanned.
func capturedKeys(ctx context.Context, b Backend, ns, session string) (map[string]int64, int, error) {
	keys := map[string]int64{}
	turns := 0
	visit := func(m *Memory) error {
		if m.Session != session {
			return nil
		}
		if m.Type == TypeTurn {
			turns++
		}
		if k, ok := m.Metadata[metaCaptureKey].(string); ok {
			keys[k] = m.ID
		}
		return ctx.Err()
	}
	err := b.View(ctx, func(tx ReadTx) error {
		sr, ok := tx.(SessionReader)
		if !ok || session == "" {
			return tx.Scan(ScanOptions{Filter: Filter{Namespaces: []string{ns}}}, visit)
		}
		members, err := sr.Session(ns, session)
		if err != nil {
			return fmt.Errorf("members of session %q: %w", session, err)
		}
		ids := make([]int64, len(members))
		for i, m := range members {
			ids[i] = m.ID
		}
		slices.Sort(ids) // as a scan visits them: a later memory's key wins
		return driver.EachMemory(tx, ids, visit)
	})
	return keys, turns, err
}
