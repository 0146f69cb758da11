package components

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/a-h/templ"
)

// Text a person reads must say what it holds. Bidi controls can make
// "%01" read as "10%"; zero-width characters make two equal-looking keys
// differ. Wherever the desk displays stored text it shows each such
// character as a visible escape, ⟨U+202E⟩, instead of obeying it.

// TextPart is a run of plain text, or one hidden character shown escaped.
type TextPart struct {
	Text   string // the plain text, or the escape "⟨U+202E⟩"
	Hidden bool   // Text is the escape of a character that would not show
	Name   string // what the hidden character does, for its title
}

// hiddenNames names the characters people are most often fooled by.
var hiddenNames = map[rune]string{
	0x200B: "zero-width space",
	0x200C: "zero-width non-joiner",
	0x200D: "zero-width joiner",
	0x200E: "left-to-right mark",
	0x200F: "right-to-left mark",
	0x202A: "left-to-right embedding",
	0x202B: "right-to-left embedding",
	0x202C: "pop directional formatting",
	0x202D: "left-to-right override",
	0x202E: "right-to-left override",
	0x2060: "word joiner",
	0x2066: "left-to-right isolate",
	0x2067: "right-to-left isolate",
	0x2068: "first strong isolate",
	0x2069: "pop directional isolate",
	0x061C: "Arabic letter mark",
	0xFEFF: "zero-width no-break space",
}

// IsHidden reports whether r would not show as itself: a bidi control, a
// zero-width or other format character, a control character other than
// newline and tab, or an invalid byte (utf8.RuneError).
func IsHidden(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r == utf8.RuneError:
		return true
	case hiddenNames[r] != "":
		return true
	}
	return unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r)
}

// Escape is how a hidden character is shown.
func Escape(r rune) string { return fmt.Sprintf("⟨U+%04X⟩", r) }

// HiddenName says what a hidden character is, for a title.
func HiddenName(r rune) string {
	if n := hiddenNames[r]; n != "" {
		return n
	}
	if unicode.Is(unicode.Cc, r) {
		return "control character"
	}
	return "invisible format character"
}

// SafeParts splits s into plain runs and hidden characters, in order.
// Joined, the parts' Text is s with every hidden character escaped.
func SafeParts(s string) []TextPart {
	var parts []TextPart
	start := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if size == 1 && r == utf8.RuneError || IsHidden(r) {
			if start < i {
				parts = append(parts, TextPart{Text: s[start:i]})
			}
			if r == utf8.RuneError {
				parts = append(parts, TextPart{Text: fmt.Sprintf("⟨0x%02X⟩", s[i]), Hidden: true, Name: "invalid byte"})
			} else {
				parts = append(parts, TextPart{Text: Escape(r), Hidden: true, Name: HiddenName(r)})
			}
			start = i + size
		}
		i += size
	}
	if start < len(s) || len(parts) == 0 {
		parts = append(parts, TextPart{Text: s[start:]})
	}
	return parts
}

// SafeString is s with every hidden character escaped, for places that
// take a plain string (a title, a text file).
func SafeString(s string) string {
	if HiddenRunes(s) == nil {
		return s
	}
	var b strings.Builder
	for _, p := range SafeParts(s) {
		b.WriteString(p.Text)
	}
	return b.String()
}

// HiddenRunes lists the distinct hidden characters in s, first seen first;
// nil when there are none.
func HiddenRunes(s string) []rune {
	var out []rune
	seen := map[rune]bool{}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if size == 1 && r == utf8.RuneError || IsHidden(r) {
			if !seen[r] {
				seen[r] = true
				out = append(out, r)
			}
		}
		i += size
	}
	return out
}

// ContentHiddenRunes is HiddenRunes of a JSON content as it decodes: a
// hidden character written as the escape \u202e counts, since the provider
// receives the character, not the escape. Text that is not JSON is read as
// it is.
func ContentHiddenRunes(raw []byte) []rune {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return HiddenRunes(string(raw))
	}
	var b strings.Builder
	collectStrings(v, &b)
	rs := HiddenRunes(b.String())
	slices.Sort(rs) // map order is random; the warning is not
	return rs
}

func collectStrings(v any, b *strings.Builder) {
	switch t := v.(type) {
	case string:
		b.WriteString(t)
	case []any:
		for _, e := range t {
			collectStrings(e, b)
		}
	case map[string]any:
		for k, e := range t {
			b.WriteString(k)
			collectStrings(e, b)
		}
	}
}

// HiddenWarning says which hidden characters a text holds, for a warning
// beside it; empty when there are none.
func HiddenWarning(rs []rune) string {
	if len(rs) == 0 {
		return ""
	}
	names := make([]string, 0, len(rs))
	for _, r := range rs {
		if r == utf8.RuneError {
			names = append(names, "an invalid byte")
			continue
		}
		names = append(names, fmt.Sprintf("U+%04X (%s)", r, HiddenName(r)))
	}
	return "It contains characters that do not show or that reorder the text around them: " +
		strings.Join(names, ", ") + ". They are shown here as ⟨U+…⟩; read the text as shown, not as it would display."
}

// Quoted is Safe between quotation marks, with no space inside them.
func Quoted(s string) templ.Component {
	return templ.ComponentFunc(func(ctx context.Context, w io.Writer) error {
		if _, err := io.WriteString(w, "“"); err != nil {
			return err
		}
		if err := Safe(s).Render(ctx, w); err != nil {
			return err
		}
		_, err := io.WriteString(w, "”")
		return err
	})
}
