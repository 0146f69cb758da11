package domain_test

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/opshandoff/handoff/domain"
)

// RFC 8785 (JSON Canonicalization Scheme) test vectors.

func canon(t *testing.T, in string) string {
	t.Helper()
	out, err := domain.Canonicalize([]byte(in))
	if err != nil {
		t.Fatalf("Canonicalize(%s): %v", in, err)
	}
	return string(out)
}

func TestCanonicalizeRFC8785Examples(t *testing.T) {
	// Section 3.2.2: the "numbers, string, literals" example.
	in := `{
	  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
	  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
	  "literals": [null, true, false]
	}`
	want := `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],` +
		`"string":"€$\u000f\nA'B\"\\\\\"/"}`
	if got := canon(t, in); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}

	// Section 3.2.3: members sorted by UTF-16 code units, so the emoji
	// (a surrogate pair starting 0xD83D) sorts before U+FB33.
	in = `{
	  "\u20ac": "Euro Sign",
	  "\r": "Carriage Return",
	  "\ufb33": "Hebrew Letter Dalet With Dagesh",
	  "1": "One",
	  "\ud83d\ude00": "Emoji: Grinning Face",
	  "\u0080": "Control",
	  "\u00f6": "Latin Small Letter O With Diaeresis"
	}`
	want = "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\"," +
		"\"\u00f6\":\"Latin Small Letter O With Diaeresis\",\"\u20ac\":\"Euro Sign\"," +
		"\"\U0001F600\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}"
	if got := canon(t, in); got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
}

func TestCanonicalizeNumbers(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"1", "1"}, {"1.0", "1"}, {"1e0", "1"}, {"1E+0", "1"}, {"10e-1", "1"},
		{"1e21", "1e+21"}, {"1e20", "100000000000000000000"}, {"1e-7", "1e-7"}, {"1.5e-7", "1.5e-7"},
		{"0.000001", "0.000001"}, {"-0", "0"}, {"-0.0", "0"}, {"0e10", "0"},
		{"123456789012345680000", "123456789012345680000"}, {"4.50", "4.5"}, {"2e-3", "0.002"},
		{"-1.5", "-1.5"}, {"9007199254740993", "9007199254740992"}, {"1e308", "1e+308"},
	} {
		if got := canon(t, tt.in); got != tt.want {
			t.Errorf("%s → %s, want %s", tt.in, got, tt.want)
		}
	}
	// RFC 8785 appendix B: IEEE 754 bit patterns and their ECMAScript form.
	for _, tt := range []struct {
		bits uint64
		want string
	}{
		{0x0000000000000000, "0"}, {0x8000000000000000, "0"},
		{0x0000000000000001, "5e-324"}, {0x8000000000000001, "-5e-324"},
		{0x7fefffffffffffff, "1.7976931348623157e+308"}, {0xffefffffffffffff, "-1.7976931348623157e+308"},
		{0x4340000000000000, "9007199254740992"}, {0xc340000000000000, "-9007199254740992"},
		{0x4430000000000000, "295147905179352830000"},
		{0x44b52d02c7e14af5, "9.999999999999997e+22"}, {0x44b52d02c7e14af6, "1e+23"},
		{0x44b52d02c7e14af7, "1.0000000000000001e+23"},
		{0x444b1ae4d6e2ef4e, "999999999999999700000"}, {0x444b1ae4d6e2ef4f, "999999999999999900000"},
		{0x444b1ae4d6e2ef50, "1e+21"},
		{0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"}, {0x3eb0c6f7a0b5ed8d, "0.000001"},
		{0x41b3de4355555553, "333333333.3333332"}, {0x41b3de4355555554, "333333333.33333325"},
		{0x41b3de4355555555, "333333333.3333333"}, {0x41b3de4355555556, "333333333.3333334"},
		{0x41b3de4355555557, "333333333.33333343"},
		{0xbecbf647612f3696, "-0.0000033333333333333333"}, {0x43143ff3c1cb0959, "1424953923781206.2"},
	} {
		in := strconv.FormatFloat(math.Float64frombits(tt.bits), 'g', -1, 64)
		if got := canon(t, in); got != tt.want {
			t.Errorf("%016x (%s) → %s, want %s", tt.bits, in, got, tt.want)
		}
	}
	for _, in := range []string{"1e400", "-1e400", "NaN", "Infinity", "01", "1.", ".5", "+1", "0x10"} {
		if out, err := domain.Canonicalize([]byte(in)); err == nil {
			t.Errorf("%s accepted as %s", in, out)
		}
	}
}

func TestCanonicalizeStrings(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`"\u0000\u0001\u001f"`, `"\u0000\u0001\u001f"`},
		{`"\u000B\u001F"`, `"\u000b\u001f"`}, // lowercase hex
		{`"\b\f\n\r\t"`, `"\b\f\n\r\t"`},
		{`"\u0008\u000c\u000a\u000d\u0009"`, `"\b\f\n\r\t"`},
		{`"\"\\"`, `"\"\\"`},
		{`"\/ and /"`, `"/ and /"`},                        // no escaping of /
		{`"\u00e9\u20ac\ud83d\ude00"`, `"é€😀"`},            // nor of non-ASCII
		{`"é€😀"`, `"é€😀"`},                                 // raw UTF-8 stays
		{`"\u007f\u2028\u2029"`, "\"\u007f\u2028\u2029\""}, // only < 0x20 is escaped
		{`"<&>'"`, `"<&>'"`},                               // no HTML escaping
	} {
		if got := canon(t, tt.in); got != tt.want {
			t.Errorf("%s → %s, want %s", tt.in, got, tt.want)
		}
	}
}

// Invalid UTF-8 is refused, not replaced: encoding/json would turn each bad
// byte into U+FFFD, and two different payloads would share one fingerprint.
func TestCanonicalizeRefusesInvalidUTF8(t *testing.T) {
	for _, in := range []string{"\"a\xffb\"", "\"a\xfeb\"", "{\"\xc3\x28\":1}", "[\"\xed\xa0\x80\"]", "{\"a\":\"\xe2\x82\"}"} {
		if out, err := domain.Canonicalize([]byte(in)); err == nil {
			t.Errorf("%q accepted as %q", in, out)
		}
	}
}

func TestCanonicalizeStructure(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{" { \"b\" : [ 1 , { \"d\":1, \"c\":2 } ] , \"a\" : null }\n", `{"a":null,"b":[1,{"c":2,"d":1}]}`},
		{`{}`, `{}`}, {`[]`, `[]`}, {`"x"`, `"x"`}, {`true`, `true`}, {`null`, `null`},
		{`{"a":{},"A":[],"":0}`, `{"":0,"A":[],"a":{}}`},
		{`{"aa":1,"a":2,"b":3}`, `{"a":2,"aa":1,"b":3}`},
	} {
		if got := canon(t, tt.in); got != tt.want {
			t.Errorf("%q → %s, want %s", tt.in, got, tt.want)
		}
	}
	for _, in := range []string{
		`{"a":1,"a":2}`,                           // duplicate keys
		`{"a":1,"b":{"c":1,"c":1}}`,               // duplicate keys, nested
		`{"a":1,"\u0061":2}`,                      // the same name, escaped
		`{} {}`, `{}x`, `[1] 2`, `1 2`, `"a" "b"`, // trailing data
		``, ` `, `{`, `{"a":}`, `{"a" 1}`, `[1,]`, `{"a":1,}`, `{,}`, `]`, `[}`, `{1:2}`, `'a'`, "\"a\nb\"",
	} {
		if out, err := domain.Canonicalize([]byte(in)); err == nil {
			t.Errorf("%q accepted as %s", in, out)
		}
	}
	if _, err := domain.CanonicalObject([]byte(`[1]`)); err == nil {
		t.Errorf("CanonicalObject accepted an array")
	}
	if c, err := domain.CanonicalObject([]byte(` {"b":1, "a":2} `)); err != nil || string(c) != `{"a":2,"b":1}` {
		t.Errorf("CanonicalObject = %s, %v", c, err)
	}
}

func TestFingerprint(t *testing.T) {
	fp := func(typ, content string) string {
		t.Helper()
		c, err := domain.CanonicalObject([]byte(content))
		if err != nil {
			t.Fatal(err)
		}
		return domain.Fingerprint(typ, c)
	}
	a := fp("crm.task.create", `{"owner":"u_9","due":"2026-12-01","n":1}`)
	b := fp("crm.task.create", "{\n  \"n\": 1.0,\n  \"due\": \"2026-12-01\",\n  \"owner\": \"u_9\"\n}")
	if a != b {
		t.Fatalf("fingerprint changed with key order, whitespace or number form: %s vs %s", a, b)
	}
	if c := fp("email.send", `{"owner":"u_9","due":"2026-12-01","n":1}`); c == a {
		t.Fatalf("a different type must give a different fingerprint")
	}
	if c := fp("crm.task.create", `{"owner":"u_9","due":"2026-12-01","n":2}`); c == a {
		t.Fatalf("different content must give a different fingerprint")
	}
	if !strings.HasPrefix(a, "sha256:") || len(a) != len("sha256:")+64 {
		t.Fatalf("fingerprint %q is not sha256:<64 hex>", a)
	}
	// It is the hash of the canonical {"content", "type"} document.
	doc, _ := json.Marshal(map[string]any{"type": "crm.task.create",
		"content": map[string]any{"owner": "u_9", "due": "2026-12-01", "n": 1}})
	if want := "sha256:" + domain.SHA256Hex([]byte(canon(t, string(doc)))); a != want {
		t.Fatalf("fingerprint %s, want %s", a, want)
	}
}

// FuzzCanonicalize: whatever is accepted is valid JSON with the same meaning,
// and canonicalizing canonical JSON changes nothing.
func FuzzCanonicalize(f *testing.F) {
	for _, s := range []string{`{"b":[1,2.50,-0,1e21],"a":{"\u20ac":"x","\r":null}}`, `"\u001f\ud83d\ude00"`,
		`[1e-7,0.000001,123456789012345680000]`, `{"a":1,"a":2}`, `{} x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := domain.Canonicalize(data)
		if err != nil {
			return
		}
		if !json.Valid(data) {
			t.Fatalf("accepted invalid JSON %q", data)
		}
		if !json.Valid(c) {
			t.Fatalf("output %q of %q is not valid JSON", c, data)
		}
		var in, out any
		if err := json.Unmarshal(data, &in); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(c, &out); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(in, out) {
			t.Fatalf("meaning changed: %q → %q", data, c)
		}
		c2, err := domain.Canonicalize(c)
		if err != nil {
			t.Fatalf("canonical output %q refused: %v", c, err)
		}
		if !bytes.Equal(c, c2) {
			t.Fatalf("not idempotent: %q → %q → %q", data, c, c2)
		}
	})
}
