package domain

import (
	"fmt"
	"log/slog"
	"regexp"
	"strings"
)

// Keys carry no personal data (invariant 12): a key, an event ID and a
// correlation ID end up in webhooks, chat messages, the desk and the
// append-only audit chain, which content purge cannot touch, so an erasure
// request could never be met. A good key hashes the personal part.

// PIIGuard says what a registration whose identifiers hold an email
// address or a phone number gets (HANDOFF_KEY_PII).
type PIIGuard struct{ s string }

// The guards; the zero value refuses.
var (
	PIIRefuse = PIIGuard{"refuse"}
	PIIWarn   = PIIGuard{"warn"}
	PIIOff    = PIIGuard{"off"}
)

func (g PIIGuard) String() string {
	if g.s == "" {
		return PIIRefuse.s
	}
	return g.s
}

// ParsePIIGuard reads a guard: refuse, warn or off.
func ParsePIIGuard(v string) (PIIGuard, error) {
	return parse(v, []PIIGuard{PIIRefuse, PIIWarn, PIIOff}, "HANDOFF_KEY_PII")
}

// The patterns: emailRE is matched as it stands, e164RE and nationalRE by
// phoneNumber, which reads the same strings faster.
var (
	emailRE = regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}`)
	// E.164: a plus, a country code and up to 15 digits in all, perhaps
	// grouped by spaces, dots or hyphens.
	e164RE = regexp.MustCompile(`\+[1-9](?:[ .-]?[0-9]){7,14}(?:[^0-9]|$)`)
	// National forms: a trunk prefix 0, an area code that does not start
	// with 0, and 10-11 digits in all, perhaps grouped by spaces or hyphens
	// (JP 090-1234-5678, UK 020 7946 0958, DE 030 1234567); or North
	// America's (555) 123-4567 and 555-123-4567. Each standing alone, not
	// inside a longer run of letters or digits such as a hash, and not a
	// zero-padded counter or a time's fraction (no dots).
	nationalRE = regexp.MustCompile(`(?:^|[^A-Za-z0-9.])(?:0[1-9](?:[ -]?[0-9]){8,9}|\(?[2-9][0-9]{2}\)?[ -][0-9]{3}[ -][0-9]{4})(?:[^A-Za-z0-9.]|$)`)
)

// PersonalData names the kind of personal data s holds — "an email
// address" or "a phone number" — or "" when it holds none that is
// recognised.
func PersonalData(s string) string {
	switch {
	// Every registration asks, for three identifiers: an email address
	// has an @, so most keys never reach the pattern.
	case strings.IndexByte(s, '@') >= 0 && emailRE.MatchString(s):
		return "an email address"
	case phoneNumber(s):
		return "a phone number"
	}
	return ""
}

// phoneNumber is e164RE || nationalRE, matched by hand: the patterns'
// nested counted repetitions are slow in the regexp engine on a key with
// a long run of digits, on every registration (docs/design/
// performance-log.md). Each pattern reads
// deterministically from where it may start (a separator is taken only
// before a digit), so one pass per candidate start decides it;
// TestPersonalData_patterns checks this against the patterns.
func phoneNumber(s string) bool {
	for p := 0; p < len(s); p++ {
		if s[p] == '+' && e164At(s, p+1) {
			return true
		}
		if (p == 0 || !wordOrDot(s[p-1])) && nationalAt(s, p) {
			return true
		}
	}
	return false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// wordOrDot is [A-Za-z0-9.]: what may not stand beside a national number.
func wordOrDot(c byte) bool {
	return isDigit(c) || c == '.' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
}

// digitRun reads (?:[seps]?[0-9]) from q up to max times and calls at
// after each with the count so far and where it ended; true when at does.
func digitRun(s string, q, max int, seps string, at func(n, q int) bool) bool {
	for n := 1; n <= max; n++ {
		switch {
		case q < len(s) && isDigit(s[q]):
			q++
		case q+1 < len(s) && strings.IndexByte(seps, s[q]) >= 0 && isDigit(s[q+1]):
			q += 2
		default:
			return false
		}
		if at(n, q) {
			return true
		}
	}
	return false
}

// e164At is e164RE after its +, from q: [1-9](?:[ .-]?[0-9]){7,14}(?:[^0-9]|$).
func e164At(s string, q int) bool {
	if q >= len(s) || s[q] < '1' || s[q] > '9' {
		return false
	}
	return digitRun(s, q+1, 14, " .-", func(n, q int) bool { return n >= 7 && (q == len(s) || !isDigit(s[q])) })
}

// nationalAt is nationalRE's number and its end, from q:
// (?:0[1-9](?:[ -]?[0-9]){8,9}|\(?[2-9][0-9]{2}\)?[ -][0-9]{3}[ -][0-9]{4})(?:[^A-Za-z0-9.]|$).
func nationalAt(s string, q int) bool {
	end := func(q int) bool { return q == len(s) || !wordOrDot(s[q]) }
	if q+1 < len(s) && s[q] == '0' && s[q+1] >= '1' && s[q+1] <= '9' &&
		digitRun(s, q+2, 9, " -", func(n, q int) bool { return n >= 8 && end(q) }) {
		return true
	}
	if q < len(s) && s[q] == '(' {
		q++
	}
	digits := func(n int) bool {
		for range n {
			if q >= len(s) || !isDigit(s[q]) {
				return false
			}
			q++
		}
		return true
	}
	sep := func() bool {
		if q < len(s) && (s[q] == ' ' || s[q] == '-') {
			q++
			return true
		}
		return false
	}
	if q >= len(s) || s[q] < '2' || s[q] > '9' {
		return false
	}
	q++
	if !digits(2) {
		return false
	}
	if q < len(s) && s[q] == ')' {
		q++
	}
	return sep() && digits(3) && sep() && digits(4) && end(q)
}

// identifierRules checks a registration's identifiers against the
// personal-data guard and the card's key_pattern.
func (l *Workflow) identifierRules(r Registration, card Card) []FieldError {
	var errs []FieldError
	if l.KeyPII != PIIOff {
		for _, f := range []struct{ name, v string }{{"key", r.Key}, {"event_id", r.EventID}, {"correlation_id", r.CorrelationID}} {
			kind := PersonalData(f.v)
			if kind == "" {
				continue
			}
			if l.KeyPII == PIIWarn {
				slog.Warn("an identifier holds personal data", "field", f.name, "kind", kind, "type", r.Type, "namespace", r.Namespace)
				continue
			}
			errs = append(errs, FieldError{f.name, fmt.Sprintf("contains %s (rule: no personal data in identifiers, HANDOFF_KEY_PII=refuse): "+
				"identifiers are kept in the audit trail and sent to webhooks forever; derive them from a hash of the personal part", kind)})
		}
	}
	if !card.KeyMatches(r.Key) {
		errs = append(errs, FieldError{"key", fmt.Sprintf("does not match the key_pattern of %s (rule: %s)", card.Name, card.KeyPattern)})
	}
	return errs
}
