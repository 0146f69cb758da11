package domain

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Twins by intent (invariant 14). A card may name the content fields that
// make two registrations the same business intent (Card.Identity, JSON
// pointers): two contents equal on those fields are twins for invariant
// 10 whatever else differs — a reworded note or title under a new key is
// still the same order. Without the line the identity is the exact
// content: the fingerprint.

// IdentityHash is what the twin hold and the echo guard compare: with
// pointers, "sha256:" and the hex SHA-256 of the canonical JSON of
// {"identity": [the value at each pointer, in order], "type": typ};
// without them, or when the content lacks a named field, the fingerprint
// (the exact content). content is canonical.
//
// A content without a named field falls back to its exact content rather
// than to an identity that the field's absence would share with every
// other such content: a card's identity holds what it can tell apart, and
// never more than the exact content would.
func IdentityHash(typ string, content []byte, pointers []string) string {
	if len(pointers) == 0 {
		return Fingerprint(typ, content)
	}
	dec := json.NewDecoder(bytes.NewReader(content))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return Fingerprint(typ, content)
	}
	values := make([]any, len(pointers))
	for i, p := range pointers {
		v, ok := JSONPointer(doc, p)
		if !ok {
			return Fingerprint(typ, content)
		}
		values[i] = v
	}
	raw, err := json.Marshal(map[string]any{"identity": values, "type": typ})
	if err != nil {
		return Fingerprint(typ, content)
	}
	canon, err := Canonicalize(raw)
	if err != nil {
		return Fingerprint(typ, content)
	}
	return "sha256:" + SHA256Hex(canon)
}

// Echo is a card's echo guard: a registration whose source is Source and
// whose identity (Card.Identity, or the exact content) is that of an
// operation of its type completed within Within is an echo of our own
// effect — the provider's webhook telling us what we did — and is not run.
type Echo struct {
	Source string
	Within time.Duration
}

// MaxEchoWindow bounds an echo guard's window.
const MaxEchoWindow = 30 * 24 * time.Hour

// validateIdentity lists the problems with the card's identity and echo
// lines.
func validateIdentity(c Card) []FieldError {
	var errs []FieldError
	bad := func(field, format string, args ...any) {
		errs = append(errs, FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if c.Identity != nil && len(c.Identity) == 0 {
		bad("identity", "must list at least one JSON pointer such as /order (leave the line out to compare the exact content)")
	}
	seen := map[string]bool{}
	for i, p := range c.Identity {
		switch {
		case p == "" || !validPointer(p):
			bad(fmt.Sprintf("identity[%d]", i), "%q is not a JSON pointer into the content such as /order or /customer/id", p)
		case seen[p]:
			bad(fmt.Sprintf("identity[%d]", i), "%q is listed twice", p)
		}
		seen[p] = true
	}
	if c.Echo != nil {
		if strings.TrimSpace(c.Echo.Source) == "" {
			bad("echo.source", "is required: the registration source that marks an echo of our own effect (such as crm-webhook)")
		} else if len(c.Echo.Source) > 255 || !ValidText(c.Echo.Source) {
			bad("echo.source", "must be valid text of at most 255 characters, without NUL")
		}
		switch {
		case c.Echo.Within == 0:
			bad("echo.within", "is required: how long after an operation completed its echo may arrive, such as 10m")
		case c.Echo.Within < 0:
			bad("echo.within", "must be positive")
		case c.Echo.Within > MaxEchoWindow:
			bad("echo.within", "must be at most %s", MaxEchoWindow)
		}
		if c.TwinsAllowed {
			bad("echo", "cannot be used with twins: allow — the same content is a normal second intent for this type")
		}
	}
	return errs
}

// echoFormat is an echo's message: the source, and the original's key, ID
// and completion.
const echoFormat = "an echo of our own effect: registered from %s with the identity of %s (%s), which completed %s ago " +
	"(within the card's echo window of %s); not run. If it is a second intent, retry it from the desk or register it with a new identity"

// echoOf decides whether a registration is an echo of an operation of its
// identity that completed within the card's window: the error it is
// refused with, and the original; nil when it is none.
func (l *Workflow) echoOf(ctx context.Context, r Registration, card Card, content []byte) (*ErrorInfo, *Operation, error) {
	if card.Echo == nil || r.Source != card.Echo.Source {
		return nil, nil, nil
	}
	now := l.Now().UTC()
	orig, ok, err := l.store.CompletedTwin(ctx, r.Namespace, IdentityHash(r.Type, content, card.Identity), now.Add(-card.Echo.Within))
	if err != nil || !ok {
		return nil, nil, err
	}
	ago := now.Sub(orig.UpdatedAt).Round(time.Second)
	return &ErrorInfo{Class: ClassConfig, Code: CodeLoopDetected,
		Message: fmt.Sprintf(echoFormat, r.Source, orig.Key, orig.ID, max(ago, 0), card.Echo.Within)}, &orig, nil
}

// sameness is what two twins of the card share, as the hold names it.
func (c Card) sameness() string {
	if len(c.Identity) == 0 {
		return "content"
	}
	return "identity (" + strings.Join(c.Identity, ", ") + ")"
}
