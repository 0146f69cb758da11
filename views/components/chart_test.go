package components

import (
	"strings"
	"testing"
)

func TestChart_Bars(t *testing.T) {
	c := Chart{Labels: []string{"a", "b", "c"}, Series: []Series{{Name: "In", Values: []float64{0, 100, 1}}, {Name: "Out", Values: []float64{2, 0, 0}}}}
	bars := c.Bars()
	if len(bars) != 3 { // the zeros are in the table, not drawn
		t.Fatalf("%d bars: %+v", len(bars), bars)
	}
	if b := bars[0]; b.Series != 1 || b.Title != "a: 2 out" {
		t.Errorf("first bar %+v", b)
	}
	if b := bars[1]; b.Y != "8.0" || b.H != "116.0" {
		t.Errorf("the largest value fills the plot: %+v", b)
	}
	if b := bars[2]; b.H != "1.5" {
		t.Errorf("a value of 1 in 100 is still seen: %+v", b)
	}
	if c.TopLabel() != "100" || (Chart{}).TopLabel() != "1" {
		t.Errorf("scale tops %q %q", c.TopLabel(), (Chart{}).TopLabel())
	}
}

func TestChart_LinesBreakWhereNoValue(t *testing.T) {
	s := Series{Name: "p50", Values: []float64{60, 120, 0, 30, 90}, Has: []bool{true, true, false, true, true}}
	c := Chart{Labels: []string{"1", "2", "3", "4", "5"}, Series: []Series{s},
		Format: func(v float64) string { return strings.Repeat("x", int(v)/30) }}
	lines := c.Lines()
	if len(lines) != 1 || len(lines[0].Points) != 2 || len(lines[0].Dots) != 4 {
		t.Fatalf("lines %+v", lines)
	}
	if c.Text(s, 2) != "–" || c.Text(s, 1) != "xxxx" || lines[0].Dots[0].Title != "1: p50 xx" {
		t.Errorf("texts %q %q %q", c.Text(s, 2), c.Text(s, 1), lines[0].Dots[0].Title)
	}
}
