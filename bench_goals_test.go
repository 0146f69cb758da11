package handoff

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchGoals_medianRule checks how scripts/bench-rounds judges the
// performance goal's lines: by the median of the rounds, with no round more
// than 15% short of the line. One slow round on a shared machine does not
// sink a line; a line met only by its best round does not pass.
func TestBenchGoals_medianRule(t *testing.T) {
	// Rounds: clients, two-call/DBOS, three-call/DBOS, two-call/River,
	// PostgreSQL CPU two-call/River, WAL two-call/River.
	rounds := strings.Join([]string{
		"8 1.60 1.10 0.72 1.20 1.40",
		"16 1.70 1.20 1.10 0.90 1.30",
		"8 1.40 0.80 0.80 1.30 1.45",
		"16 1.20 1.10 0.95 1.20 1.40",
		"8 1.55 1.00 0.50 1.10 1.50",
		"16 1.90 1.30 1.05 0.95 1.60",
	}, "\n") + "\n"
	file := filepath.Join(t.TempDir(), "goals")
	if err := os.WriteFile(file, []byte(rounds), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("awk", "-f", "scripts/bench-goals.awk", file).CombinedOutput()
	if err != nil {
		t.Fatalf("awk: %v\n%s", err, out)
	}
	cells := map[string][2]string{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Split(line, " | ")
		if len(f) != 3 || strings.HasPrefix(line, "| line") {
			continue
		}
		cells[strings.TrimPrefix(f[0], "| ")] = [2]string{f[1], strings.TrimSuffix(f[2], " |")}
	}
	for _, c := range []struct {
		line    string
		clients int // 8 or 16
		want    string
	}{
		// A round 7% short of 1.5, the median above: holds.
		{"two-call ≥ 1.5× DBOS", 8, "holds: median 1.55, min 1.40 (1.40, 1.55, 1.60)"},
		// The median holds, but one round is 20% short: does not.
		{"two-call ≥ 1.5× DBOS", 16, "does not hold: median 1.70, min 1.20"},
		// The median exactly on the line, one round 20% short: does not.
		{"three-call ≥ 1.0× DBOS", 8, "does not hold: median 1.00, min 0.80"},
		{"three-call ≥ 1.0× DBOS", 16, "holds: median 1.20"},
		// The River line differs by client count: 0.7 at 8, 1.0 at 16.
		{"two-call ≥ 0.7× River at 8 clients, ≥ 1.0× at 16", 8, "does not hold: median 0.72, min 0.50"},
		{"two-call ≥ 0.7× River at 8 clients, ≥ 1.0× at 16", 16, "holds: median 1.05, min 0.95"},
		// Lines that must stay under: the worst round is the largest.
		{"PostgreSQL CPU per two-call ≤ 1.25× River's at 8, ≤ 1.0× at 16", 8, "holds: median 1.20, max 1.30"},
		{"PostgreSQL CPU per two-call ≤ 1.25× River's at 8, ≤ 1.0× at 16", 16, "does not hold: median 0.95, max 1.20"},
		{"WAL per two-call ≤ 1.5× River's", 16, "holds: median 1.40, max 1.60"},
	} {
		row, ok := cells[c.line]
		if !ok {
			t.Fatalf("no line %q in:\n%s", c.line, out)
		}
		got := row[0]
		if c.clients == 16 {
			got = row[1]
		}
		if !strings.HasPrefix(got, c.want) {
			t.Errorf("%s at %d clients: %q, want it to start %q", c.line, c.clients, got, c.want)
		}
	}
}
