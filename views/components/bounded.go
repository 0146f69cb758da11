package components

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// The desk renders whatever is stored — content registered before today's
// limits included — so its renderers are bounded by what they write, not by
// what they read. Budgets count bytes as the page will carry them: the
// characters HTML escapes cost their entity.

// The budgets: one content shown in full, one diff. A page holds at most
// two of the first (the snapshot and the revise form) and a few of the
// second, which keeps every desk page well under a megabyte.
const (
	ContentBudget = 128 << 10
	DiffBudget    = 32 << 10
)

// htmlCost is what b costs once escaped for HTML.
func htmlCost(b byte) int {
	switch b {
	case '&', '"', '\'':
		return 5
	case '<', '>':
		return 4
	}
	return 1
}

// textCost is what s costs once escaped for HTML.
func textCost(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n += htmlCost(s[i])
	}
	return n
}

// BoundedJSON indents JSON for reading as PrettyJSON does, stopping at a
// line end once budget is spent; truncated says it stopped. Text that is
// not JSON is returned as is, cut the same way. It never does more work
// than the budget and one pass to validate, however deep the document.
func BoundedJSON(raw []byte, budget int) (text string, truncated bool) {
	if !json.Valid(raw) {
		return cutText(string(raw), budget)
	}
	var b strings.Builder
	cost, depth, inString, escaped := 0, 0, false, false
	newline := func() {
		b.WriteByte('\n')
		for range depth {
			b.WriteString("  ")
		}
		cost += 1 + 2*depth
	}
	for i := 0; i < len(raw); i++ {
		if cost > budget {
			text, _ := cutText(b.String(), budget)
			return text, true
		}
		c := raw[i]
		if inString {
			b.WriteByte(c)
			cost += htmlCost(c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
		case '"':
			inString = true
			b.WriteByte(c)
			cost += htmlCost(c)
		case '{', '[':
			b.WriteByte(c)
			cost++
			j := i + 1
			for j < len(raw) && strings.IndexByte(" \t\n\r", raw[j]) >= 0 {
				j++
			}
			if raw[j] == '}' || raw[j] == ']' { // empty: {} or []
				b.WriteByte(raw[j])
				cost++
				i = j
				continue
			}
			depth++
			newline()
		case '}', ']':
			depth--
			newline()
			b.WriteByte(c)
			cost++
		case ',':
			b.WriteByte(c)
			cost++
			newline()
		case ':':
			b.WriteString(": ")
			cost += 2
		default:
			b.WriteByte(c)
			cost++
		}
	}
	return b.String(), false
}

// cutText is s if it fits budget, else its longest prefix of whole lines
// (or whole characters, when the first line alone is too long) that does.
func cutText(s string, budget int) (string, bool) {
	cost := 0
	for i := 0; i < len(s); i++ {
		cost += htmlCost(s[i])
		if cost > budget {
			return cutAtLine(s[:i]), true
		}
	}
	return s, false
}

// cutAtLine drops a trailing partial line, unless that would drop most of
// what fits (one long line), then only a partial character.
func cutAtLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i > len(s)/2 {
		return s[:i]
	}
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// diffLineCost is a diff line's markup around its text.
const diffLineCost = len(`<span class="diff-line diff-removed">- ` + "\n</span>")

// BoundedDiff is LineDiff of two texts, cut once budget is spent;
// truncated says lines were left out.
func BoundedDiff(before, after string, budget int) (lines []DiffLine, truncated bool) {
	cost := 0
	for _, l := range LineDiff(before, after) {
		c := diffLineCost + textCost(l.Text)
		if cost+c > budget {
			// The line that does not fit is shown as far as it does, so one
			// long line still shows where it starts.
			if left := budget - cost - diffLineCost; left > 0 {
				l.Text, _ = cutText(l.Text, left)
				lines = append(lines, l)
			}
			return lines, true
		}
		cost += c
		lines = append(lines, l)
	}
	return lines, false
}
