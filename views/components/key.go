package components

import (
	"strings"
	"unicode/utf8"
)

// KeyBudget is how many characters of a key a list shows.
const KeyBudget = 48

// MiddleShort shortens a key that is longer than budget in its middle,
// where long keys differ least: a path-like key keeps its first and last
// segments ("tenant-eu-west-1/…/charge:order_2026-12-06_88101"), any
// other its head and its tail. Keys at most budget long are unchanged.
func MiddleShort(key string, budget int) string {
	n := utf8.RuneCountInString(key)
	if n <= budget || budget < 5 {
		return key
	}
	if i, j := strings.Index(key, "/"), strings.LastIndex(key, "/"); i > 0 && j > i {
		short := key[:i+1] + "…" + key[j:]
		if utf8.RuneCountInString(short) <= budget {
			return short
		}
	}
	rs := []rune(key)
	head := (budget - 1) / 3
	tail := budget - 1 - head
	return string(rs[:head]) + "…" + string(rs[n-tail:])
}

// SummaryField is one summary field of an operation: its name and value.
type SummaryField struct{ Name, Value string }
