package docs

import (
	"os"
	"strings"
	"testing"
)

// TestPages_fitTheirPurpose: the README is a front door and the performance
// page a summary; what does not fit goes into docs/ and its log.
func TestPages_fitTheirPurpose(t *testing.T) {
	for file, most := range map[string]int{"../README.md": 200, "performance.md": 150} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), "\n"); n > most {
			t.Errorf("%s has %d lines, more than %d", file, n, most)
		}
	}
}
