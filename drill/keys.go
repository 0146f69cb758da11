package drill

import (
	"crypto/sha256"
	"fmt"
	"math/big"
	"regexp"
	"regexp/syntax"
	"strings"
)

// The drill's keys follow the card's key_pattern: the server refuses a
// key that does not match, so a drill with its own key shape would test
// nothing but that refusal. A key is made from the pattern itself: each
// literal written as it stands, each character class by one of its
// characters, and the first repetition of a class long enough carries a
// token unique to the run, the case and the key's role, written in that
// class's characters.

// patternKeys makes the keys of one run; nil when the card has no pattern.
type patternKeys struct {
	pattern string
	re      *regexp.Regexp
	tree    *syntax.Regexp
}

func newPatternKeys(pattern string) (*patternKeys, error) {
	if pattern == "" {
		return nil, nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, fmt.Errorf("key_pattern %q: %w", pattern, err)
	}
	tree, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("key_pattern %q: %w", pattern, err)
	}
	return &patternKeys{pattern: pattern, re: re, tree: tree}, nil
}

// key makes a key matching the pattern that carries token, or an error
// when the pattern has no repetition that can carry it.
func (p *patternKeys) key(token string) (string, error) {
	g := keyGen{token: token}
	g.walk(p.tree)
	out := g.b.String()
	if !g.placed {
		return "", fmt.Errorf("key_pattern %q has no repeated character class to make distinct keys in", p.pattern)
	}
	if !p.re.MatchString(out) {
		return "", fmt.Errorf("key_pattern %q: the drill made %q, which it does not match", p.pattern, out)
	}
	return out, nil
}

// Matches reports whether key matches the pattern.
func (p *patternKeys) matches(key string) bool { return p.re.MatchString(key) }

type keyGen struct {
	b      strings.Builder
	token  string
	placed bool
}

func (g *keyGen) walk(re *syntax.Regexp) {
	switch re.Op {
	case syntax.OpLiteral:
		g.b.WriteString(string(re.Rune))
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		g.b.WriteRune(alphabet(re)[0])
	case syntax.OpCapture:
		g.walk(re.Sub[0])
	case syntax.OpConcat:
		for _, s := range re.Sub {
			g.walk(s)
		}
	case syntax.OpAlternate:
		g.walk(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		low, high := 0, -1
		switch re.Op {
		case syntax.OpPlus:
			low = 1
		case syntax.OpQuest:
			high = 1
		case syntax.OpRepeat:
			low, high = re.Min, re.Max
		}
		sub := re.Sub[0]
		if !g.placed && (sub.Op == syntax.OpCharClass || sub.Op == syntax.OpAnyChar || sub.Op == syntax.OpAnyCharNotNL) {
			if s, ok := encode(g.token, alphabet(sub), low, high); ok {
				g.b.WriteString(s)
				g.placed = true
				return
			}
		}
		for range low {
			g.walk(sub)
		}
	}
	// Anchors, word boundaries and empty matches write nothing.
}

// alphabet is the characters of a one-character matcher the drill uses:
// printable ASCII, digits and lower-case letters first.
func alphabet(re *syntax.Regexp) []rune {
	in := func(r rune) bool {
		switch re.Op {
		case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
			return true
		}
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if re.Rune[i] <= r && r <= re.Rune[i+1] {
				return true
			}
		}
		return false
	}
	var out []rune
	for _, r := range "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_-.:" {
		if in(r) {
			out = append(out, r)
		}
	}
	for r := rune(0x21); r < 0x7f && len(out) == 0; r++ {
		if in(r) {
			out = append(out, r)
		}
	}
	if len(out) == 0 && len(re.Rune) > 0 {
		out = append(out, re.Rune[0])
	}
	return out
}

// encode writes token in the alphabet's characters, at least low and at
// most high (-1: no limit) of them: the token's bytes as a number in base
// len(alphabet), so distinct tokens give distinct strings; a token too
// long for high is hashed first.
func encode(token string, alpha []rune, low, high int) (string, bool) {
	if len(alpha) < 2 || (high >= 0 && high < 6) {
		return "", false // too few characters to tell the keys of a run apart
	}
	digits := func(b []byte) []rune {
		n := new(big.Int).SetBytes(b)
		base := big.NewInt(int64(len(alpha)))
		var out []rune
		for n.Sign() > 0 {
			m := new(big.Int)
			n.DivMod(n, base, m)
			out = append(out, alpha[m.Int64()])
		}
		return out
	}
	d := digits([]byte(token))
	if high >= 0 && len(d) > high {
		sum := sha256.Sum256([]byte(token))
		d = digits(sum[:])[:high]
	}
	for len(d) < low {
		d = append(d, alpha[0])
	}
	return string(d), true
}
