//go:build !noplot

package bench

import (
	"bytes"
	"cmp"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/memos-go/memos/core"
)

// Plots tells whether this build can draw charts (see noplot.go).
const Plots = true

// ErrNoPlot is what SavePlot returns in a build without charts.
var ErrNoPlot error

// SavePlot writes the report's charts to path as SVG or PNG, chosen by the
// extension (.svg or .png); see WritePlot.
func (r *Report) SavePlot(path string) error {
	format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	var buf bytes.Buffer
	if err := r.WritePlot(&buf, format); err != nil {
		return err
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write plot: %w", err)
	}
	return nil
}

// WritePlot draws nine charts on one canvas in format "svg" or "png", each
// against the number of memories per store with one line per backend ×
// embedder (× vector index, × data set when there are several): the median
// latency of keyword, vector and hybrid search and of a context pack, the
// ingest rate, the cold open plus first query, disk and open memory per
// 100,000 memories; and recall@10 (or the report's first cutoff) per
// retriever for every labelled run. The legends are in a column on the
// right, next to the charts they explain.
func (r *Report) WritePlot(w io.Writer, format string) error {
	const width, height, legendWidth = 16 * vg.Inch, 12 * vg.Inch, 3.2 * vg.Inch
	var c vg.CanvasWriterTo
	switch format {
	case "svg":
		c = vgsvg.New(width, height)
	case "png":
		c = vgimg.PngCanvas{Canvas: vgimg.New(width, height)}
	default:
		return core.Invalidf("plot format %q: want svg or png (the file name's extension)", format)
	}
	latLegend, recLegend := newLegend(), newLegend()
	var charts []*plot.Plot
	for i, m := range r.metrics() {
		var leg *plot.Legend
		if i == 0 {
			leg = &latLegend // every growth chart has the same series
		}
		p, err := r.growthPlot(m, leg)
		if err != nil {
			return err
		}
		charts = append(charts, p)
	}
	rp, err := r.recallPlot(&recLegend)
	if err != nil {
		return err
	}
	charts = append(charts, rp)
	const cols = 3
	rows := (len(charts) + cols - 1) / cols
	plots := make([][]*plot.Plot, rows)
	for i := range plots {
		plots[i] = make([]*plot.Plot, cols)
	}
	for i, p := range charts {
		plots[i/cols][i%cols] = p
	}

	dc := draw.New(c)
	grid := draw.Crop(dc, 0, -legendWidth, 0, 0)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Centimeter, PadY: vg.Centimeter,
		PadTop: vg.Millimeter * 3, PadBottom: vg.Millimeter * 3, PadLeft: vg.Millimeter * 3, PadRight: vg.Millimeter * 3}
	canvases := plot.Align(plots, tiles, grid)
	for j := range plots {
		for i := range plots[j] {
			if plots[j][i] != nil {
				plots[j][i].Draw(canvases[j][i])
			}
		}
	}
	side := draw.Crop(dc, width-legendWidth+vg.Millimeter*2, 0, vg.Millimeter*3, -vg.Millimeter*3)
	top := draw.Crop(side, 0, 0, (side.Max.Y-side.Min.Y)/2, 0)
	bottom := draw.Crop(side, 0, 0, 0, -(side.Max.Y-side.Min.Y)/2)
	latLegend.Draw(top)
	recLegend.Draw(bottom)
	if _, err := c.WriteTo(w); err != nil {
		return fmt.Errorf("write plot: %w", err)
	}
	return nil
}

func newLegend() plot.Legend {
	l := plot.NewLegend()
	l.Top, l.Left = true, true
	l.TextStyle.Font.Size = vg.Points(10)
	return l
}

// seriesLabel names a run's line or bar.
func (r *Report) seriesLabel(run *Result, withDocs bool) string {
	names, indexes := map[string]bool{}, map[string]bool{}
	for _, x := range r.Results {
		names[x.Dataset] = true
		indexes[x.VectorIndex] = true
	}
	label := run.Backend + " · " + run.Embedder
	if len(indexes) > 1 {
		label += " · " + run.VectorIndex
	}
	if len(names) > 1 {
		label += " · " + run.Dataset
	}
	if withDocs {
		label += fmt.Sprintf(" %d", run.Docs)
	}
	return label
}

// metric is one growth chart: a figure of a run, false when the run has
// none.
type metric struct {
	title, unit string
	get         func(*Result) (float64, bool)
}

// metrics lists the growth charts: latency per search mode and of a
// context pack, then ingest rate, cold open, disk and memory.
func (r *Report) metrics() []metric {
	latency := func(l *Latency) (float64, bool) {
		if l == nil || l.Queries == 0 {
			return 0, false
		}
		return float64(l.P50) / 1e6, true
	}
	var ms []metric
	for _, mode := range Modes {
		ms = append(ms, metric{fmt.Sprintf("%s search: median latency", mode), "p50 latency (ms)",
			func(run *Result) (float64, bool) { return latency(run.Latency[mode]) }})
	}
	positive := func(v float64) (float64, bool) { return v, v > 0 }
	return append(ms,
		metric{fmt.Sprintf("context pack (%d tokens): median latency", PackBudget), "p50 latency (ms)",
			func(run *Result) (float64, bool) { return latency(run.Pack) }},
		metric{"ingest rate", "memories per second",
			func(run *Result) (float64, bool) { return positive(run.Ingest.PerSecond) }},
		metric{"cold open + first query (median over stores)", "ms",
			func(run *Result) (float64, bool) { return positive(float64(run.Open.Median) / 1e6) }},
		metric{"disk per 100,000 memories (du)", "MiB",
			func(run *Result) (float64, bool) { return positive(run.DiskPer100k / (1 << 20)) }},
		metric{"open store's memory per 100,000 memories (RSS growth)", "MiB",
			func(run *Result) (float64, bool) { return positive(run.OpenRSSPer100k / (1 << 20)) }},
	)
}

// growthPlot charts one metric against the memories per store; it adds the
// series to leg when leg is not nil. Series keep their colour across
// charts.
func (r *Report) growthPlot(m metric, leg *plot.Legend) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = m.title
	p.X.Label.Text = "memories per store"
	p.Y.Label.Text = m.unit
	type series struct {
		label string
		xys   plotter.XYs
	}
	var all []*series
	byLabel := map[string]*series{}
	for _, run := range r.Results {
		label := r.seriesLabel(run, false)
		if byLabel[label] == nil {
			byLabel[label] = &series{label: label}
			all = append(all, byLabel[label])
		}
	}
	var xs, ys []float64
	for _, run := range r.Results {
		y, ok := m.get(run)
		if !ok {
			continue
		}
		x := float64(run.Docs) / float64(max(run.Corpora, 1))
		s := byLabel[r.seriesLabel(run, false)]
		s.xys = append(s.xys, plotter.XY{X: x, Y: y})
		xs, ys = append(xs, x), append(ys, y)
	}
	if len(xs) == 0 {
		p.Title.Text += " (no data)"
		return p, nil
	}
	switch sx := spread(xs); {
	case sx >= 10:
		p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, logTicks{}
	case sx == 1: // one size: give the points some room
		p.X.Min, p.X.Max = 0, 2*xs[0]
	}
	if spread(ys) >= 20 {
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, logTicks{}
	} else {
		p.Y.Min = 0
	}
	for i, s := range all {
		if len(s.xys) == 0 {
			continue
		}
		slices.SortFunc(s.xys, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
		line, points, err := plotter.NewLinePoints(s.xys)
		if err != nil {
			return nil, fmt.Errorf("plot %s: %w", s.label, err)
		}
		line.Color, points.Color = colour(i), colour(i)
		line.Dashes = plotutil.Dashes(i / len(palette))
		points.Shape = plotutil.Shape(i)
		p.Add(line, points)
		if leg != nil {
			leg.Add(s.label, line, points)
		}
	}
	return p, nil
}

// palette holds distinguishable colours (matplotlib's "tab10" and two more).
var palette = []color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, {0xff, 0x7f, 0x0e, 0xff}, {0x2c, 0xa0, 0x2c, 0xff}, {0xd6, 0x27, 0x28, 0xff},
	{0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff}, {0xe3, 0x77, 0xc2, 0xff}, {0x7f, 0x7f, 0x7f, 0xff},
	{0xbc, 0xbd, 0x22, 0xff}, {0x17, 0xbe, 0xcf, 0xff}, {0x39, 0x3b, 0x79, 0xff}, {0x63, 0x79, 0x39, 0xff},
}

func colour(i int) color.Color { return palette[i%len(palette)] }

// logTicks labels 1, 2 and 5 times each power of ten on a log axis (only
// the powers of ten when the axis spans more than two of them), with
// unlabelled ticks in between; gonum's LogTicks labels powers of ten only,
// which leaves a narrow range with one label or none. Labels are compact:
// 10k, 1M.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	var ts []plot.Tick
	wide := hi/lo > 200
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for m := 1.0; m < 10; m++ {
			v := m * math.Pow(10, e)
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || (!wide && (m == 2 || m == 5)) {
				t.Label = compact(v)
			}
			ts = append(ts, t)
		}
	}
	return ts
}

// compact writes v with a k or M suffix from a thousand on.
func compact(v float64) string {
	switch {
	case v >= 1e6:
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + "M"
	case v >= 1e3:
		return strconv.FormatFloat(v/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// spread is max/min of positive values (1 when there are none).
func spread(v []float64) float64 {
	if len(v) == 0 || slices.Min(v) <= 0 {
		return 1
	}
	return slices.Max(v) / slices.Min(v)
}

// recallPlot charts recall per retriever as grouped bars, one bar per
// labelled run, and adds the bars to leg.
func (r *Report) recallPlot(leg *plot.Legend) (*plot.Plot, error) {
	ks := r.allK()
	k := ks[0]
	if slices.Contains(ks, 10) {
		k = 10
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("recall@%d per retriever", k)
	p.Y.Label.Text = fmt.Sprintf("recall@%d", k)
	p.Y.Min, p.Y.Max = 0, 1
	names := make([]string, len(Modes))
	for i, m := range Modes {
		names[i] = string(m)
	}
	p.NominalX(names...)
	var runs []*Result
	sizes := map[string]map[int]bool{}
	for _, run := range r.Results {
		if run.Quality == nil {
			continue
		}
		runs = append(runs, run)
		if sizes[run.Dataset] == nil {
			sizes[run.Dataset] = map[int]bool{}
		}
		sizes[run.Dataset][run.Docs] = true
	}
	if len(runs) == 0 {
		p.Title.Text += " (no labelled data)"
		return p, nil
	}
	// A chart is about 4.5 inches wide, so a retriever's group of bars
	// gets a bit under 1.5 inches.
	groupWidth := vg.Inch * 1.1
	barWidth := groupWidth / vg.Length(len(runs))
	for i, run := range runs {
		vals := make(plotter.Values, len(Modes))
		for j, m := range Modes {
			if q := run.Quality[m]; q != nil {
				vals[j] = q.Recall[k]
			}
		}
		bars, err := plotter.NewBarChart(vals, barWidth)
		if err != nil {
			return nil, fmt.Errorf("plot recall: %w", err)
		}
		bars.Color = colour(i)
		bars.LineStyle.Width = 0
		bars.Offset = barWidth * (vg.Length(i) - vg.Length(len(runs)-1)/2)
		p.Add(bars)
		leg.Add(r.seriesLabel(run, len(sizes[run.Dataset]) > 1), bars)
	}
	return p, nil
}
