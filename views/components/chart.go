package components

import (
	"strconv"
	"strings"
)

// Charts are drawn on the server as SVG from their numbers alone: no
// script, no library. Each has a title and a description for screen
// readers and the same numbers in a table beside it; its viewBox scales to
// the width it is given, so it reads on a phone as on a desk.

// Chart is one chart's data: buckets along the x axis, one value per
// bucket for each series.
type Chart struct {
	ID          string // unique on the page: the prefix of its elements' ids
	Title, Desc string
	Bucket      string   // the table's first column: "Hour", "Day"
	Labels      []string // each bucket, for the table and the bars' tooltips
	Start, End  string   // the x axis's two ends
	Series      []Series
	// Format writes a value for the axis and tooltips; nil: a count.
	Format func(float64) string
}

// Series is one line or one colour of bars.
type Series struct {
	Name   string
	Values []float64
	Has    []bool // which buckets have a value; nil: all
}

// has reports whether bucket i has a value.
func (s Series) has(i int) bool { return i < len(s.Values) && (s.Has == nil || s.Has[i]) }

// Text is bucket i's value as the table shows it, "–" for none.
func (c Chart) Text(s Series, i int) string {
	if !s.has(i) {
		return "–"
	}
	return c.format(s.Values[i])
}

func (c Chart) format(v float64) string {
	if c.Format != nil {
		return c.Format(v)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// The plot's geometry in SVG user units: a 360 × 150 box, room on the left
// for the scale and below for the axis's labels.
const (
	plotLeft, plotRight = 34, 356
	plotTop, plotBottom = 8, 124
	chartWidth          = 360
	chartHeight         = 150
)

// ViewBox is the chart's SVG viewBox.
func (Chart) ViewBox() string {
	return "0 0 " + strconv.Itoa(chartWidth) + " " + strconv.Itoa(chartHeight)
}

// Top is the scale's top: the largest value, at least 1.
func (c Chart) Top() float64 {
	top := 0.0
	for _, s := range c.Series {
		for i, v := range s.Values {
			if s.has(i) {
				top = max(top, v)
			}
		}
	}
	if top <= 0 {
		return 1
	}
	return top
}

// TopLabel is the scale's top, written.
func (c Chart) TopLabel() string { return c.format(c.Top()) }

// y is a value's height on the plot.
func (c Chart) y(v float64) float64 {
	return plotBottom - v/c.Top()*(plotBottom-plotTop)
}

// Rect is one bar.
type Rect struct {
	X, Y, W, H string
	Series     int // which series: its colour
	Title      string
}

// Bars lays out grouped bars: per bucket one bar of each series side by
// side, a non-zero value never thinner than a line, a zero not drawn.
func (c Chart) Bars() []Rect {
	n := len(c.Labels)
	if n == 0 || len(c.Series) == 0 {
		return nil
	}
	slot := float64(plotRight-plotLeft) / float64(n)
	w := slot * 0.8 / float64(len(c.Series))
	var out []Rect
	for i := range n {
		for k, s := range c.Series {
			if !s.has(i) || s.Values[i] == 0 {
				continue // the table has the zeros
			}
			v := s.Values[i]
			top := c.y(v)
			if v > 0 && plotBottom-top < 1.5 {
				top = plotBottom - 1.5
			}
			x := plotLeft + float64(i)*slot + slot*0.1 + float64(k)*w
			out = append(out, Rect{X: num(x), Y: num(top), W: num(w), H: num(plotBottom - top), Series: k,
				Title: c.Labels[i] + ": " + c.format(v) + " " + strings.ToLower(s.Name)})
		}
	}
	return out
}

// Line is one series as polylines, broken where buckets have no value.
type Line struct {
	Series int
	Points []string // each a polyline's points
	Dots   []Dot    // a mark per value, for a lone point and its tooltip
}

// Dot is one value on a line.
type Dot struct{ X, Y, Title string }

// Lines lays out each series as a line through the buckets' middles.
func (c Chart) Lines() []Line {
	n := len(c.Labels)
	if n == 0 {
		return nil
	}
	slot := float64(plotRight-plotLeft) / float64(n)
	var out []Line
	for k, s := range c.Series {
		l := Line{Series: k}
		var run []string
		flush := func() {
			if len(run) > 1 {
				l.Points = append(l.Points, strings.Join(run, " "))
			}
			run = nil
		}
		for i := range n {
			if !s.has(i) {
				flush()
				continue
			}
			x, y := num(plotLeft+(float64(i)+0.5)*slot), num(c.y(s.Values[i]))
			run = append(run, x+","+y)
			l.Dots = append(l.Dots, Dot{X: x, Y: y, Title: c.Labels[i] + ": " + s.Name + " " + c.format(s.Values[i])})
		}
		flush()
		out = append(out, l)
	}
	return out
}

// num writes a coordinate with one decimal.
func num(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// Axis positions, for the template.
var (
	AxisLeft   = strconv.Itoa(plotLeft)
	AxisRight  = strconv.Itoa(plotRight)
	AxisTop    = strconv.Itoa(plotTop)
	AxisBottom = strconv.Itoa(plotBottom)
	LabelY     = strconv.Itoa(plotBottom + 16)
	ScaleX     = strconv.Itoa(plotLeft - 4)
	ScaleTopY  = strconv.Itoa(plotTop + 8)
)

// SeriesClass is the CSS class of series k's colour.
func SeriesClass(k int) string { return "series-" + strconv.Itoa(k%3) }
