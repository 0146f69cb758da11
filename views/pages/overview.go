package pages

import (
	"fmt"
	"time"

	"github.com/opshandoff/handoff/views/layouts"
)

// OverviewView is the desk at a glance.
type OverviewView struct {
	Frame   layouts.Frame
	Now     time.Time
	States  []StateCount
	Bands   []BandCount
	InDesk  int
	Entered int   // entries into the desk in the last 24 h
	PerHour []int // entries per hour, oldest first
	Latest  []EntryRow
	Oldest  *QueueRow
	// Recovery is the last week of recovery work (overview_recovery.templ).
	Recovery *RecoveryView
}

// StateCount is how many operations are in one state.
type StateCount struct {
	State  string
	N      int
	InDesk bool
	Link   string // the queue or list filtered to this state; "" for none
}

// BandCount is how many desk items fall in one age band.
type BandCount struct {
	Label string
	N     int
	Link  string
}

// EntryRow is one entry into the desk.
type EntryRow struct {
	ID, Key, Type, State string
	At                   time.Time
}

// Bar is one bar of the entries chart, in SVG user units.
type Bar struct {
	X, Y, W, H int
	N          int
	Title      string
}

// The chart's geometry: 24 bars in a 480×120 box with room for labels.
const (
	chartW, chartH, chartTop = 480, 120, 10
	barSlot                  = chartW / 24
)

// Bars lays out the per-hour chart, scaled to the busiest hour.
func (v OverviewView) Bars() []Bar {
	top := 1
	for _, n := range v.PerHour {
		top = max(top, n)
	}
	bars := make([]Bar, len(v.PerHour))
	for i, n := range v.PerHour {
		h := n * (chartH - chartTop) / top
		if n > 0 && h < 2 {
			h = 2 // a single entry must stay visible
		}
		ago := len(v.PerHour) - i
		bars[i] = Bar{X: i*barSlot + 2, Y: chartH - h, W: barSlot - 4, H: h, N: n,
			Title: fmt.Sprintf("%d entered %d–%d h ago", n, ago, ago-1)}
	}
	return bars
}

// ChartMax is the busiest hour, for the chart's label.
func (v OverviewView) ChartMax() int {
	top := 0
	for _, n := range v.PerHour {
		top = max(top, n)
	}
	return top
}
