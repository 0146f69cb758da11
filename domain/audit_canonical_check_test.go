package domain

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// TestDetailIsCanonical: what the fast check accepts is exactly what
// canonDetail writes back unchanged — on random details as json.Marshal
// writes them, on their canonical forms and on both with a byte changed,
// inserted or dropped — and it accepts the ledger's usual details.
func TestDetailIsCanonical(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	accepted := 0
	check := func(b []byte) {
		t.Helper()
		if !detailIsCanonical(b) {
			return
		}
		accepted++
		got, err := canonDetail(b)
		if err != nil || !bytes.Equal(got, b) {
			t.Fatalf("accepted %q, but canonDetail makes %q (%v)", b, got, err)
		}
	}
	for range 30000 {
		raw, err := json.Marshal(randomDetail(rng, 0))
		if err != nil {
			t.Fatal(err)
		}
		check(raw)
		canon, err := canonDetail(raw)
		if err != nil {
			t.Fatal(err)
		}
		check(canon)
		for _, b := range [][]byte{raw, canon} {
			m := bytes.Clone(b)
			i := rng.IntN(len(m))
			switch rng.IntN(3) {
			case 0:
				m[i] = detailBytes[rng.IntN(len(detailBytes))]
			case 1:
				m = append(m[:i], append([]byte{detailBytes[rng.IntN(len(detailBytes))]}, m[i:]...)...)
			default:
				m = append(m[:i], m[i+1:]...)
			}
			check(m)
		}
	}
	for _, b := range []string{`{"a":1,"a":2}`, `{"a":{"b":1,"b":1}}`, `{"b":1,"a":2}`, `"\/"`, `"\u000a"`, `"\u001F"`,
		`1.0`, `1e3`, `-0`, `01`, `9007199254740993`, `{"a" :1}`, `[1,]`, `{"é":1}`, "\"\xff\"", `"\u2028"`} {
		check([]byte(b))
	}
	if accepted < 20000 {
		t.Fatalf("only %d accepted: the fast path is hardly taken", accepted)
	}
	for _, d := range []json.RawMessage{
		detail(map[string]any{"worker": "w-1", "lease_seconds": 30, "token": int64(7), "began": true}),
		detail(map[string]any{"outcome": "completed", "result_ref": "crm_1", "attempt": 1}),
	} {
		if !detailIsCanonical(d) {
			t.Errorf("a usual detail goes the long way: %s", d)
		}
	}
}

// detailBytes are what random details are made of: JSON's punctuation,
// the characters RFC 8785 and encoding/json escape differently, and more.
const detailBytes = "{}[]\":,\\ 0123456789.-+eEtrufalsn<>&/abcAB_\x00\x01\x08\x09\x0a\x0b\x1f\x7f\xc3\xa9\xe2\x80\xa8\xf0\x9f\x98\x80\xff"

func randomDetail(rng *rand.Rand, depth int) any {
	str := func() string {
		b := make([]byte, rng.IntN(6))
		for i := range b {
			b[i] = detailBytes[rng.IntN(len(detailBytes))]
		}
		if rng.IntN(2) == 0 {
			return "k" + string(b[:min(len(b), 2)])
		}
		return string(b)
	}
	k := rng.IntN(10)
	if depth > 3 {
		k = 4 + rng.IntN(6)
	}
	switch k {
	case 0, 1:
		m := map[string]any{}
		for range rng.IntN(5) {
			m[str()] = randomDetail(rng, depth+1)
		}
		return m
	case 2:
		a := make([]any, rng.IntN(4))
		for i := range a {
			a[i] = randomDetail(rng, depth+1)
		}
		return a
	case 3:
		return []string{str(), str()}
	case 4:
		return str()
	case 5:
		return rng.Int64N(1 << uint(rng.IntN(63)))
	case 6:
		return -rng.IntN(1000)
	case 7:
		return rng.Float64() * float64(rng.IntN(1e6))
	case 8:
		return rng.IntN(2) == 0
	default:
		return nil
	}
}
