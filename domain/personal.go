package domain

import (
	"fmt"
	"log/slog"
	"regexp"
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
	case emailRE.MatchString(s):
		return "an email address"
	case e164RE.MatchString(s) || nationalRE.MatchString(s):
		return "a phone number"
	}
	return ""
}

// identifierRules checks a registration's identifiers against the
// personal-data guard and the card's key_pattern.
func (l *Ledger) identifierRules(r Registration, card Card) []FieldError {
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
