package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// The README and every page under docs/ link to each other; these tests
// keep every relative link and #anchor pointing at something, by GitHub's
// rules for heading anchors, without fetching anything.

// codeFence opens or closes a fenced code block.
var codeFence = regexp.MustCompile("^\\s{0,3}(```|~~~)")

// prose is a Markdown text's lines with its fenced code blocks blanked,
// where neither headings nor links live. (An indented line cannot be a
// heading, and the indented commands hold no links.)
func prose(text string) []string {
	var out []string
	in := false
	for line := range strings.SplitSeq(text, "\n") {
		if codeFence.MatchString(line) {
			in = !in
			line = ""
		}
		if in {
			line = ""
		}
		out = append(out, line)
	}
	return out
}

// inlineCode is a code span, where a link is only text.
var inlineCode = regexp.MustCompile("`[^`]*`")

var (
	heading    = regexp.MustCompile(`^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	htmlAnchor = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	// link is an inline link or image: [text](target) or ![alt](target "title").
	link = regexp.MustCompile(`!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
)

// anchors are the fragment identifiers GitHub gives a document's headings:
// lower case, everything but letters, digits, spaces, hyphens and
// underscores dropped, spaces made hyphens, and -1, -2 … after repeats.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, line := range prose(text) {
		if m := heading.FindStringSubmatch(line); m != nil {
			a := slug(m[2])
			if n := seen[a]; n > 0 {
				out[a+"-"+strconv.Itoa(n)] = true
			} else {
				out[a] = true
			}
			seen[a]++
		}
	}
	for _, m := range htmlAnchor.FindAllStringSubmatch(text, -1) {
		out[m[1]] = true
	}
	return out
}

func slug(h string) string {
	// A link in a heading anchors by its text.
	h = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(h, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

// userDocs are the README and every Markdown file under docs/, relative to
// the repository root.
func userDocs(t *testing.T) []string {
	t.Helper()
	out := []string{"README.md"}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			out = append(out, filepath.ToSlash(filepath.Join("docs", path)))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLinks_resolve: every relative link in the README and under docs/
// names a file of the repository, and every #anchor a heading (or an
// explicit anchor) of the page it points into.
func TestLinks_resolve(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	texts := map[string]string{}
	read := func(rel string) (string, bool) {
		if s, ok := texts[rel]; ok {
			return s, true
		}
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return "", false
		}
		texts[rel] = string(b)
		return string(b), true
	}
	links := 0
	for _, doc := range userDocs(t) {
		text, ok := read(doc)
		if !ok {
			t.Fatalf("cannot read %s", doc)
		}
		for i, line := range prose(text) {
			for _, m := range link.FindAllStringSubmatch(inlineCode.ReplaceAllString(line, ""), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue // external: not fetched
				}
				links++
				where := doc + ":" + strconv.Itoa(i+1)
				file, frag, _ := strings.Cut(target, "#")
				dest := doc
				if file != "" {
					dest = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(doc), file)))
					if dest == ".." || strings.HasPrefix(dest, "../") {
						t.Errorf("%s: %s leaves the repository", where, target)
						continue
					}
					if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(dest))); err != nil {
						t.Errorf("%s: %s does not exist", where, target)
						continue
					}
				}
				if frag == "" {
					continue
				}
				if !strings.HasSuffix(dest, ".md") {
					t.Errorf("%s: %s has an anchor into a file that is not Markdown", where, target)
					continue
				}
				destText, _ := read(dest)
				if !anchors(destText)[frag] {
					t.Errorf("%s: %s: %s has no heading with the anchor #%s", where, target, dest, frag)
				}
			}
		}
	}
	if links < 50 {
		t.Fatalf("only %d relative links checked", links)
	}
}

// TestLinks_anchorRules: the anchors are GitHub's.
func TestLinks_anchorRules(t *testing.T) {
	a := anchors("# Handoff\n## `POST /v1/operations/{id}/claim`\n## Errors: RFC 9457 problem details\n" +
		"## Leases and fencing\n## Leases and fencing\n```sh\n# not a heading\n```\n### Who retries, and what a new key means\n" +
		"## Instructions, counted: a measure the machine does not move\n")
	for _, want := range []string{"handoff", "post-v1operationsidclaim", "errors-rfc-9457-problem-details",
		"leases-and-fencing", "leases-and-fencing-1", "who-retries-and-what-a-new-key-means",
		"instructions-counted-a-measure-the-machine-does-not-move"} {
		if !a[want] {
			t.Errorf("no anchor %q in %v", want, a)
		}
	}
	if a["not-a-heading"] {
		t.Error("a comment in a code block made an anchor")
	}
}
