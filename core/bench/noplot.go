//go:build noplot

package bench

import (
	"io"

	"github.com/memos-go/memos/core"
)

// Plots tells whether this build can draw charts: builds with the noplot
// tag (the release binaries) leave gonum/plot and its fonts out.
const Plots = false

// ErrNoPlot is what SavePlot and WritePlot return in such a build.
var ErrNoPlot = core.Invalidf("this memos was built without charts (the noplot tag leaves out the plotting library and its fonts, 6 MB); " +
	"build one with them from source (go install ./cmd/memos) to draw --plot, or chart the --out JSON report yourself")

// SavePlot reports that this build has no charts.
func (r *Report) SavePlot(path string) error { return ErrNoPlot }

// WritePlot reports that this build has no charts.
func (r *Report) WritePlot(w io.Writer, format string) error { return ErrNoPlot }
