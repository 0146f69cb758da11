package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// The hot path's answers — the operation, a registration with its claim —
// are written by hand rather than by encoding/json's reflection, which was
// most of render's cost per call. The bytes are exactly encoding/json's
// (TestAppendOperation_sameBytes compares them over many operations): the
// same member order, omitempty, HTML-safe string escaping, RFC 3339 times
// and compacted raw JSON. Anything the hand encoder is unsure of — a
// string that needs escaping, a year encoding/json refuses — goes through
// encoding/json itself, so an error stays the error it was.

// errEncodeFallback says the value is left to encoding/json.
var errEncodeFallback = errors.New("left to encoding/json")

// bodyBuffers are the buffers answers are encoded into: a call's buffer
// goes back once its bytes are written to the connection.
var bodyBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBody keeps an unusually large answer's buffer out of the pool.
const maxPooledBody = 64 << 10

// encodeFast encodes the hot path's answer types into b; ok is false for
// any other type, and err is errEncodeFallback where encoding/json must
// decide.
func encodeFast(b *bytes.Buffer, v any) (ok bool, err error) {
	switch x := v.(type) {
	case *operationJSON:
		if x == nil {
			return false, nil
		}
		return true, appendOperation(b, x, true)
	case registerResponse:
		return true, appendRegisterResponse(b, x)
	}
	return false, nil
}

func appendRegisterResponse(b *bytes.Buffer, r registerResponse) error {
	if r.operationJSON == nil {
		return errEncodeFallback
	}
	if err := appendOperation(b, r.operationJSON, false); err != nil {
		return err
	}
	if r.Claim != nil {
		b.WriteString(`,"claim":`)
		c, ok := r.Claim.(*claimJSON)
		if !ok {
			return errEncodeFallback
		}
		if c == nil {
			b.WriteString("null")
		} else if err := appendClaim(b, c); err != nil {
			return err
		}
	}
	if cr := r.ClaimRefused; cr != nil {
		b.WriteString(`,"claim_refused":{"reason":`)
		if err := appendString(b, cr.Reason); err != nil {
			return err
		}
		b.WriteString(`,"detail":`)
		if err := appendString(b, cr.Detail); err != nil {
			return err
		}
		if cr.RetryAfterSeconds != 0 {
			b.WriteString(`,"retry_after_seconds":`)
			appendInt(b, int64(cr.RetryAfterSeconds))
		}
		b.WriteByte('}')
	}
	b.WriteByte('}')
	return nil
}

func appendClaim(b *bytes.Buffer, c *claimJSON) error {
	b.WriteByte('{')
	if c.Operation != nil {
		b.WriteString(`"operation":`)
		if err := appendOperation(b, c.Operation, true); err != nil {
			return err
		}
		b.WriteByte(',')
	}
	b.WriteString(`"lease":{"token":`)
	appendInt(b, c.Lease.Token)
	b.WriteString(`,"worker":`)
	if err := appendString(b, c.Lease.Worker); err != nil {
		return err
	}
	b.WriteString(`,"expires_at":`)
	if err := appendTime(b, c.Lease.ExpiresAt); err != nil {
		return err
	}
	b.WriteString(`},"attempt":{"id":`)
	if err := appendString(b, c.Attempt.ID); err != nil {
		return err
	}
	b.WriteString(`,"number":`)
	appendInt(b, int64(c.Attempt.Number))
	b.WriteString(`},"content":`)
	if err := appendRaw(b, c.Content); err != nil {
		return err
	}
	b.WriteString(`,"content_sha256":`)
	if err := appendString(b, c.ContentSHA256); err != nil {
		return err
	}
	b.WriteString(`,"provider_key":`)
	if err := appendString(b, c.ProviderKey); err != nil {
		return err
	}
	b.WriteString(`,"provider_key_use":`)
	if err := appendString(b, c.ProviderKeyUse); err != nil {
		return err
	}
	b.WriteByte('}')
	return nil
}

// appendOperation writes o as encoding/json does; closed false leaves the
// object open for the members a registration adds.
func appendOperation(b *bytes.Buffer, o *operationJSON, closed bool) error {
	e := opEncoder{b: b}
	e.str(`{"id":`, o.ID)
	e.str(`,"namespace":`, o.Namespace)
	e.str(`,"key":`, o.Key)
	e.str(`,"type":`, o.Type)
	e.str(`,"state":`, o.State)
	b.WriteString(`,"version":`)
	appendInt(b, o.Version)
	e.strOrNull(`,"event_id":`, o.EventID)
	e.strOrNull(`,"source":`, o.Source)
	e.strOrNull(`,"correlation_id":`, o.CorrelationID)
	e.strOrNull(`,"caused_by":`, o.CausedBy)
	e.strOrNull(`,"supersedes":`, o.Supersedes)
	e.strOrNull(`,"superseded_by":`, o.SupersededBy)
	e.str(`,"fingerprint":`, o.Fingerprint)
	b.WriteString(`,"content_version":`)
	appendInt(b, int64(o.ContentVersion))
	e.str(`,"content_sha256":`, o.ContentSHA256)
	if len(o.Content) > 0 {
		b.WriteString(`,"content":`)
		e.raw(o.Content)
	}
	if o.ContentHidden {
		b.WriteString(`,"content_hidden":true`)
	}
	if o.ContentBytes != 0 {
		b.WriteString(`,"content_bytes":`)
		appendInt(b, int64(o.ContentBytes))
	}
	if o.ContentPurgedAt != nil {
		e.timeOrNull(`,"content_purged_at":`, o.ContentPurgedAt)
	}
	b.WriteString(`,"approval":`)
	if a := o.Approval; a == nil {
		b.WriteString("null")
	} else {
		b.WriteString(`{"content_version":`)
		appendInt(b, int64(a.ContentVersion))
		e.str(`,"by":`, a.By)
		e.time(`,"at":`, a.At)
		b.WriteByte('}')
	}
	e.strOrNull(`,"provider_key":`, o.ProviderKey)
	e.timeOrNull(`,"provider_key_first_sent_at":`, o.ProviderKeyFirstSentAt)
	b.WriteString(`,"provider_key_content_version":`)
	if v := o.ProviderKeyContentVersion; v == nil {
		b.WriteString("null")
	} else {
		appendInt(b, int64(*v))
	}
	b.WriteString(`,"attempts":`)
	appendInt(b, int64(o.Attempts))
	b.WriteString(`,"lease":`)
	if l := o.Lease; l == nil {
		b.WriteString("null")
	} else {
		e.str(`{"worker":`, l.Worker)
		e.time(`,"expires_at":`, l.ExpiresAt)
		b.WriteByte('}')
	}
	e.timeOrNull(`,"next_retry_at":`, o.NextRetryAt)
	b.WriteString(`,"result":`)
	if r := o.Result; r == nil {
		b.WriteString("null")
	} else {
		e.str(`{"ref":`, r.Ref)
		b.WriteString(`,"data":`)
		e.raw(r.Data)
		b.WriteByte('}')
	}
	b.WriteString(`,"last_error":`)
	if le := o.LastError; le == nil {
		b.WriteString("null")
	} else {
		e.str(`{"class":`, le.Class)
		e.str(`,"code":`, le.Code)
		e.str(`,"message":`, le.Message)
		b.WriteByte('}')
	}
	e.strOrNull(`,"assignee":`, o.Assignee)
	b.WriteString(`,"resolution":`)
	if r := o.Resolution; r == nil {
		b.WriteString("null")
	} else {
		e.str(`{"action":`, r.Action)
		e.str(`,"by":`, r.By)
		e.str(`,"reason":`, r.Reason)
		e.time(`,"at":`, r.At)
		b.WriteByte('}')
	}
	e.time(`,"created_at":`, o.CreatedAt)
	e.time(`,"updated_at":`, o.UpdatedAt)
	e.str(`,"links":{"self":`, o.Links.Self)
	e.str(`,"desk":`, o.Links.Desk)
	b.WriteByte('}')
	if closed {
		b.WriteByte('}')
	}
	return e.err
}

// opEncoder writes members, keeping the first error: after one, the
// buffer is thrown away, so what follows it does not matter.
type opEncoder struct {
	b   *bytes.Buffer
	err error
}

func (e *opEncoder) str(name, v string) {
	e.b.WriteString(name)
	if err := appendString(e.b, v); err != nil && e.err == nil {
		e.err = err
	}
}

// strOrNull writes *v, or null when v is nil.
func (e *opEncoder) strOrNull(name string, v *string) {
	if v == nil {
		e.b.WriteString(name)
		e.b.WriteString("null")
		return
	}
	e.str(name, *v)
}

func (e *opEncoder) time(name string, t time.Time) {
	e.b.WriteString(name)
	if err := appendTime(e.b, t); err != nil && e.err == nil {
		e.err = err
	}
}

// timeOrNull writes *t, or null when t is nil.
func (e *opEncoder) timeOrNull(name string, t *time.Time) {
	if t == nil {
		e.b.WriteString(name)
		e.b.WriteString("null")
		return
	}
	e.time(name, *t)
}

func (e *opEncoder) raw(m json.RawMessage) {
	if err := appendRaw(e.b, m); err != nil && e.err == nil {
		e.err = err
	}
}

func appendInt(b *bytes.Buffer, n int64) {
	var tmp [20]byte
	b.Write(strconv.AppendInt(tmp[:0], n, 10))
}

// appendString writes s quoted when it needs no escaping at all —
// printable ASCII other than the quote, the backslash and the three
// characters encoding/json escapes for HTML; anything else is
// encoding/json's to escape.
func appendString(b *bytes.Buffer, s string) error {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			out, err := json.Marshal(s)
			if err != nil {
				return err
			}
			b.Write(out)
			return nil
		}
	}
	b.WriteByte('"')
	b.WriteString(s)
	b.WriteByte('"')
	return nil
}

// appendTime writes t as time.Time's MarshalJSON does (RFC 3339 with
// nanoseconds); a year outside 0–9999, which it refuses, is left to it.
func appendTime(b *bytes.Buffer, t time.Time) error {
	if y := t.Year(); y < 0 || y > 9999 {
		return errEncodeFallback
	}
	var tmp [48]byte
	out := append(tmp[:0], '"')
	out = t.AppendFormat(out, time.RFC3339Nano)
	b.Write(append(out, '"'))
	return nil
}

// appendRaw writes raw JSON as encoding/json writes a RawMessage: null
// when empty, else compacted, and HTML-escaped where it holds <, >, & or
// the line and paragraph separators.
func appendRaw(b *bytes.Buffer, m json.RawMessage) error {
	if m == nil {
		b.WriteString("null")
		return nil
	}
	if needsHTMLEscape(m) {
		return errEncodeFallback
	}
	return json.Compact(b, m)
}

func needsHTMLEscape(m []byte) bool {
	for _, c := range m {
		// 0xE2 starts U+2028 and U+2029 in UTF-8.
		if c == '<' || c == '>' || c == '&' || c == 0xE2 {
			return true
		}
	}
	return false
}
