package components

import (
	"strings"
	"testing"
)

// TestBoundedJSON: within the budget it is PrettyJSON; beyond it, it stops
// near the budget and says so — however deep the stored document, including
// ones stored before nesting was limited.
func TestBoundedJSON(t *testing.T) {
	for _, doc := range []string{`{}`, `[]`, `{"a":[1,{"b":[]},{}],"c":"x\"y\\\\z","d":{"e":null}}`, `"plain"`, ` [ 1 , 2 ]`, `not json`} {
		got, cut := BoundedJSON([]byte(doc), ContentBudget)
		if want := PrettyJSON([]byte(doc)); got != want || cut {
			t.Errorf("BoundedJSON(%s) = %q (cut %v), want %q", doc, got, cut, want)
		}
	}
	deep := strings.Repeat(`{"a":`, 9990) + "1" + strings.Repeat("}", 9990)
	for _, doc := range []string{deep, `{"s":"` + strings.Repeat("&", 60000) + `"}`, strings.Repeat("<", 60000)} {
		got, cut := BoundedJSON([]byte(doc), DiffBudget)
		if !cut || textCost(got) > DiffBudget || textCost(got) < DiffBudget/2 {
			t.Errorf("%d-byte document: cut %v, %d bytes escaped for a budget of %d", len(doc), cut, textCost(got), DiffBudget)
		}
	}
}

// TestBoundedDiff: the diff's markup and text stay within the budget.
func TestBoundedDiff(t *testing.T) {
	before := strings.Repeat("a\n", 5000)
	after := strings.Repeat("b\n", 5000)
	lines, cut := BoundedDiff(before, after, DiffBudget)
	if !cut || len(lines)*diffLineCost > DiffBudget || len(lines) == 0 {
		t.Fatalf("%d lines, cut %v", len(lines), cut)
	}
	if lines, cut := BoundedDiff("x\n", "y\n", DiffBudget); cut || len(lines) != 2 {
		t.Fatalf("small diff: %+v %v", lines, cut)
	}
}
