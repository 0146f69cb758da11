package components

import (
	"strings"
	"testing"
	"time"
)

func TestLineDiff(t *testing.T) {
	before := PrettyJSON([]byte(`{"a":1,"b":"x","c":true}`))
	after := PrettyJSON([]byte(`{"a":1,"b":"y","c":true,"d":null}`))
	var got []string
	for _, l := range LineDiff(before, after) {
		got = append(got, l.Kind.Sign()+l.Text)
	}
	want := []string{` {`, `   "a": 1,`, `-  "b": "x",`, `-  "c": true`, `+  "b": "y",`, `+  "c": true,`, `+  "d": null`, ` }`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("diff:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if d := LineDiff("", "x"); len(d) != 1 || d[0].Kind != DiffAdded {
		t.Fatalf("from nothing: %+v", d)
	}
	if d := LineDiff("same\n", "same"); len(d) != 1 || d[0].Kind != DiffSame {
		t.Fatalf("unchanged: %+v", d)
	}
}

func TestAge(t *testing.T) {
	for d, want := range map[int64]string{40: "40 s", 125: "2 m", 3*3600 + 300: "3 h 5 m", 2*86400 + 7200: "2 d 2 h", -5: "0 s"} {
		if got := Age(secs(d)); got != want {
			t.Errorf("Age(%ds) = %q, want %q", d, got, want)
		}
	}
}

func secs(n int64) time.Duration { return time.Duration(n) * time.Second }
