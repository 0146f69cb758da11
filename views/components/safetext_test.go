package components

import (
	"context"
	"slices"
	"strings"
	"testing"
)

func TestSafeStringEscapesWhatDoesNotShow(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "charge:order-1", "charge:order-1"},
		{"empty", "", ""},
		{"newline and tab stay", "a\n\tb", "a\n\tb"},
		{"bidi override", "Your code gives \u202e%01\u202c off", "Your code gives ⟨U+202E⟩%01⟨U+202C⟩ off"},
		{"embeddings", "\u202a\u202b\u202d", "⟨U+202A⟩⟨U+202B⟩⟨U+202D⟩"},
		{"isolates", "\u2066x\u2067y\u2068z\u2069", "⟨U+2066⟩x⟨U+2067⟩y⟨U+2068⟩z⟨U+2069⟩"},
		{"marks", "\u200e\u200f\u061c", "⟨U+200E⟩⟨U+200F⟩⟨U+061C⟩"},
		{"zero width", "ke\u200by\u200c\u200d\u2060\ufeff", "ke⟨U+200B⟩y⟨U+200C⟩⟨U+200D⟩⟨U+2060⟩⟨U+FEFF⟩"},
		{"other format character", "a\u00adb", "a⟨U+00AD⟩b"},
		{"control characters", "a\x00b\rc\x1b", "a⟨U+0000⟩b⟨U+000D⟩c⟨U+001B⟩"},
		{"invalid byte", "a\xffb", "a⟨0xFF⟩b"},
		{"letters of other scripts stay", "注文 ✓ é", "注文 ✓ é"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := SafeString(tc.in); got != tc.want {
				t.Fatalf("SafeString(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestSafePartsMarkEachHiddenCharacter(t *testing.T) {
	parts := SafeParts("a\u202eb")
	want := []TextPart{{Text: "a"}, {Text: "⟨U+202E⟩", Hidden: true, Name: "right-to-left override"}, {Text: "b"}}
	if !slices.Equal(parts, want) {
		t.Fatalf("parts %+v, want %+v", parts, want)
	}
}

func TestContentHiddenRunesReadsJSONAsItDecodes(t *testing.T) {
	for _, tc := range []struct {
		name string
		raw  string
		want []rune
	}{
		{"none", `{"text":"10% off"}`, nil},
		{"written raw", "{\"text\":\"Your code gives \u202e%01\u202c off\"}", []rune{0x202C, 0x202E}},
		{"written as escapes", `{"text":"Your code gives \u202e%01\u202c off"}`, []rune{0x202C, 0x202E}},
		{"in a key", `{"a\u200bb":1}`, []rune{0x200B}},
		{"not JSON", "x\u2066", []rune{0x2066}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ContentHiddenRunes([]byte(tc.raw)); !slices.Equal(got, tc.want) {
				t.Fatalf("got %U, want %U", got, tc.want)
			}
		})
	}
	if w := HiddenWarning([]rune{0x202E}); !strings.Contains(w, "U+202E (right-to-left override)") {
		t.Fatalf("warning %q does not name the character", w)
	}
	if HiddenWarning(nil) != "" {
		t.Fatal("a warning for text with nothing hidden")
	}
}

func TestDiffShowsHiddenCharactersEscaped(t *testing.T) {
	var b strings.Builder
	if err := Diff(LineDiff("", "gives \u202e%01\u202c off")).Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	if strings.ContainsRune(html, 0x202E) || strings.ContainsRune(html, 0x202C) {
		t.Fatalf("the diff carries the raw bidi controls: %q", html)
	}
	if !strings.Contains(html, `<span class="esc" title="right-to-left override" data-testid="hidden-char">⟨U+202E⟩</span>%01`) {
		t.Fatalf("the diff does not show the override as an escape: %s", html)
	}
	if !strings.Contains(html, "+ gives ") {
		t.Fatalf("the diff line lost its sign or text: %s", html)
	}
}

func TestQuotedHasNoSpaceInsideTheMarks(t *testing.T) {
	var b strings.Builder
	if err := Quoted("owner \u200bgone").Render(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	want := `“owner <span class="esc" title="zero-width space" data-testid="hidden-char">⟨U+200B⟩</span>gone”`
	if b.String() != want {
		t.Fatalf("got %s\nwant %s", b.String(), want)
	}
}
