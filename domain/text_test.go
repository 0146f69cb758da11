package domain

import "testing"

// TestCanonicalize_LoneSurrogates: an escaped lone UTF-16 surrogate is
// refused like invalid UTF-8 (encoding/json would read each as U+FFFD, so
// two different contents would share a fingerprint); pairs and escaped
// backslashes are not surrogates.
func TestCanonicalize_LoneSurrogates(t *testing.T) {
	for _, raw := range []string{`{"a":"\ud800"}`, `{"a":"\uDBFF"}`, `{"a":"\udc00"}`, `{"a":"\ud800\ud800"}`,
		`{"a":"x\ud800y"}`, `{"\ud800":1}`, `["\ud83d"]`, `{"a":"\ud800\n"}`} {
		if _, err := Canonicalize([]byte(raw)); err == nil {
			t.Errorf("%s was accepted", raw)
		}
	}
	for _, raw := range []string{`{"a":"\ud83d\ude00"}`, `{"a":"\\ud800"}`, `{"a":"\\\ud83d\ude00"}`, `{"a":"\u00e9"}`} {
		if _, err := Canonicalize([]byte(raw)); err != nil {
			t.Errorf("%s was refused: %v", raw, err)
		}
	}
}

// TestRelayedText: NUL and invalid UTF-8 become U+FFFD, the rest is kept.
func TestRelayedText(t *testing.T) {
	if got := RelayedText("a\x00b\xffc é"); got != "a\uFFFDb\uFFFDc é" {
		t.Fatalf("%q", got)
	}
	if ValidText("a\x00") || ValidText("\xff") || !ValidText("é") {
		t.Fatal("ValidText")
	}
}
