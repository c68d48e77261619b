package bench

import (
	"fmt"
	"io"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/memos-go/memos/core/bench/dataset"
)

// progress draws the bars of one run: for a single store, one bar for
// ingest and one for queries; for a data set of many stores (LongMemEval),
// one bar over the stores. A nil *progress draws nothing.
type progress struct {
	w           io.Writer
	title       string
	multi       bool
	ingestTotal int
	queryTotal  int
	stores      int
	phase       string
	bar         *progressbar.ProgressBar
}

func newProgress(w io.Writer, title string, d *dataset.Dataset, p *queryPlan, indexes int) *progress {
	if w == nil {
		return nil
	}
	pr := &progress{w: w, title: title, multi: len(d.Corpora) > 1, ingestTotal: d.Docs(), stores: len(d.Corpora)}
	for ci, cp := range p.corpora {
		pr.queryTotal += len(cp.timed) * (len(Modes) + 1) * indexes // + 1: context packs
		for _, qi := range cp.order {
			if d.Corpora[ci].Queries[qi].Labelled() {
				pr.queryTotal += len(Modes) * indexes
			}
		}
	}
	return pr
}

func (p *progress) ingested(n int) {
	if p != nil && !p.multi {
		p.start("ingest", p.ingestTotal, "docs")
		p.bar.Add(n)
	}
}

func (p *progress) queried() {
	if p != nil && !p.multi {
		p.start("queries", p.queryTotal, "queries")
		p.bar.Add(1)
	}
}

func (p *progress) corpusDone() {
	if p != nil && p.multi {
		p.start("stores", p.stores, "stores")
		p.bar.Add(1)
	}
}

// start begins a phase's bar unless it is the current one.
func (p *progress) start(phase string, total int, unit string) {
	if p.phase == phase {
		return
	}
	p.done()
	p.phase = phase
	w := p.w
	p.bar = progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(fmt.Sprintf("%s: %s", p.title, phase)),
		progressbar.OptionSetWidth(24),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString(unit),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
	)
}

// done ends the current bar, finished or not.
func (p *progress) done() {
	if p == nil || p.bar == nil {
		return
	}
	if !p.bar.IsFinished() {
		p.bar.Exit()
		fmt.Fprintln(p.w)
	}
	p.bar, p.phase = nil, ""
}
