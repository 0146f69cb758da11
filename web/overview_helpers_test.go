package web

import (
	"strconv"
	"strings"

	"golang.org/x/net/html"
)

// chartRows are a chart's numbers as its table gives them: per bucket, the
// label and each series' value.
func chartRows(p answer, id string) [][]string {
	var out [][]string
	for _, row := range p.all(id + "-row") {
		var cells []string
		for c := row.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode {
				cells = append(cells, strings.TrimSpace(text(c)))
			}
		}
		out = append(out, cells)
	}
	return out
}

// chartSum adds up column col (1: the first series) of a chart's table.
func chartSum(p answer, id string, col int) int {
	n := 0
	for _, r := range chartRows(p, id) {
		if col < len(r) {
			v, _ := strconv.Atoi(r[col])
			n += v
		}
	}
	return n
}
