package domain_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/opshandoff/handoff/domain"
)

// nested is depth levels of {"a": …} (objects) or […] (arrays) around 1.
func nested(depth int, arrays bool) string {
	open, close := `{"a":`, `}`
	if arrays {
		open, close = `[`, `]`
	}
	return strings.Repeat(open, depth) + "1" + strings.Repeat(close, depth)
}

// TestCanonicalize_NestingLimit: 64 levels are canonical, 65 are refused
// with the path of the first value too deep.
func TestCanonicalize_NestingLimit(t *testing.T) {
	for _, arrays := range []bool{false, true} {
		if _, err := domain.Canonicalize([]byte(nested(domain.MaxNesting, arrays))); err != nil {
			t.Fatalf("64 levels (arrays %v): %v", arrays, err)
		}
		for _, depth := range []int{domain.MaxNesting + 1, 9990} {
			_, err := domain.Canonicalize([]byte(nested(depth, arrays)))
			var deep *domain.NestingError
			if !errors.As(err, &deep) {
				t.Fatalf("%d levels (arrays %v): err = %v, want a NestingError", depth, arrays, err)
			}
			step := ".a"
			if arrays {
				step = "[0]"
			}
			if want := strings.Repeat(step, domain.MaxNesting); deep.Path != want {
				t.Fatalf("%d levels: path %q, want %q", depth, deep.Path, want)
			}
		}
	}
	_, err := domain.Canonicalize([]byte(`{"x":[1,{"odd key":` + nested(domain.MaxNesting-2, false) + `}]}`))
	var deep *domain.NestingError
	if !errors.As(err, &deep) || !strings.HasPrefix(deep.Path, `.x[1]["odd key"].a.a`) {
		t.Fatalf("mixed path: %v %+v", err, deep)
	}
}

// BenchmarkCanonicalize64KiB canonicalizes 64 KiB contents of the shapes
// that cost most: 64 levels deep with wide leaves, many members to sort,
// long strings to escape. The target is in docs/design/performance-log.md.
func BenchmarkCanonicalize64KiB(b *testing.B) {
	for name, doc := range bigContents() {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				if _, err := domain.Canonicalize(doc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCanonicalizeTooDeep is the refusal of the 9,990-deep document
// that was once slow to accept (docs/design/performance-log.md).
func BenchmarkCanonicalizeTooDeep(b *testing.B) {
	doc := []byte(nested(9990, false))
	for b.Loop() {
		if _, err := domain.Canonicalize(doc); err == nil {
			b.Fatal("accepted")
		}
	}
}

func bigContents() map[string][]byte {
	const size = 64 << 10
	deep := `{"a":` + nested(domain.MaxNesting-2, false)[:0]
	var sb strings.Builder
	sb.WriteString(strings.Repeat(`{"a":`, domain.MaxNesting-1) + `[`)
	for sb.Len() < size-200 {
		sb.WriteString(`1,`)
	}
	sb.WriteString(`1]` + strings.Repeat(`}`, domain.MaxNesting-1))
	deep = sb.String()

	var wide strings.Builder
	wide.WriteString("{")
	for i := 0; wide.Len() < size-100; i++ {
		if i > 0 {
			wide.WriteString(",")
		}
		wide.WriteString(`"k` + strings.Repeat("z", i%7) + string(rune('a'+i%26)) + itoaPad(i) + `":` + itoaPad(i))
	}
	wide.WriteString("}")

	str := `{"s":"` + strings.Repeat(`\"&<\u00e9\n`, (size-20)/13) + `"}`
	return map[string][]byte{"deep": []byte(deep), "wide": []byte(wide.String()), "strings": []byte(str)}
}

func itoaPad(i int) string {
	const digits = "0123456789"
	s := ""
	for {
		s = string(digits[i%10]) + s
		i /= 10
		if i == 0 {
			return s
		}
	}
}
