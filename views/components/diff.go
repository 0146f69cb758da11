package components

import (
	"bytes"
	"encoding/json"
	"strings"
)

// DiffKind says whether a line was kept, removed or added.
type DiffKind int

// The kinds of diff lines.
const (
	DiffSame DiffKind = iota
	DiffRemoved
	DiffAdded
)

func (k DiffKind) String() string { return [...]string{"same", "removed", "added"}[k] }

// Sign is the line's marker, as in a unified diff.
func (k DiffKind) Sign() string { return [...]string{" ", "-", "+"}[k] }

// DiffLine is one line of a diff.
type DiffLine struct {
	Kind DiffKind
	Text string
}

// PrettyJSON indents JSON for reading; text that is not JSON is returned as is.
func PrettyJSON(raw []byte) string {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}

// maxDiffLines bounds the quadratic table (4 MiB at most): content is at
// most 64 KiB, and beyond this many lines a person reads the two versions
// side by side anyway.
const maxDiffLines = 1000

// LineDiff compares two texts line by line with a longest common subsequence,
// which is plenty for content snapshots of a few dozen lines.
func LineDiff(before, after string) []DiffLine {
	a, b := splitLines(before), splitLines(after)
	if len(a) > maxDiffLines || len(b) > maxDiffLines {
		out := make([]DiffLine, 0, len(a)+len(b))
		for _, l := range a {
			out = append(out, DiffLine{DiffRemoved, l})
		}
		for _, l := range b {
			out = append(out, DiffLine{DiffAdded, l})
		}
		return out
	}
	// lcs[i][j] is the length of the longest common subsequence of a[i:], b[j:].
	lcs := make([][]int32, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int32, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []DiffLine
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			out = append(out, DiffLine{DiffSame, a[i]})
			i, j = i+1, j+1
		case lcs[i+1][j] >= lcs[i][j+1]:
			out = append(out, DiffLine{DiffRemoved, a[i]})
			i++
		default:
			out = append(out, DiffLine{DiffAdded, b[j]})
			j++
		}
	}
	for ; i < len(a); i++ {
		out = append(out, DiffLine{DiffRemoved, a[i]})
	}
	for ; j < len(b); j++ {
		out = append(out, DiffLine{DiffAdded, b[j]})
	}
	return out
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
