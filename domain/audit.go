package domain

import (
	"context"
	"time"
)

// The audit trail is hash-chained per stream: each event's hash covers the
// previous event's hash and the event's canonical JSON, so editing, removing
// or reordering an event breaks every hash after it.

// CanonicalJSON is the event as it is hashed: every field but the hash itself,
// in RFC 8785 form. audit_canonical.go writes it.
func (e AuditEvent) CanonicalJSON() []byte {
	c, err := e.canonicalJSON()
	if err != nil {
		panic("audit event does not canonicalize: " + err.Error()) // Detail is always produced by json.Marshal
	}
	return c
}

// HashEvent computes the event's chain hash from its PrevHash and content.
func HashEvent(e AuditEvent) string {
	return SHA256Hex(append([]byte(e.PrevHash+"\n"), e.CanonicalJSON()...))
}

// seal chains the change's events onto the operation's audit head.
func seal(ch *Change) {
	prev := ch.Op.AuditHead
	for i := range ch.Events {
		ch.Events[i].PrevHash = prev
		ch.Events[i].Hash = HashEvent(ch.Events[i])
		prev = ch.Events[i].Hash
	}
	ch.Op.AuditHead = prev
}

// ChainAfter places e in its stream right after the event (seq, hash) and
// seals it: the store calls it inside the transaction that read the head.
func ChainAfter(e AuditEvent, prevSeq int64, prevHash string) AuditEvent {
	e.Seq = prevSeq + 1
	e.PrevHash = prevHash
	e.Hash = HashEvent(e)
	return e
}

// SystemAuditor appends events that belong to no operation — sign-ins,
// tokens created or revoked, cards loaded — to the system stream.
type SystemAuditor interface {
	AppendSystem(ctx context.Context, e AuditEvent) (AuditEvent, error)
}

// SystemEvent builds an event for the system stream; AppendSystem chains it.
func SystemEvent(ctx context.Context, ids *IDSource, now time.Time, actor Actor, action, reason string, detailFields map[string]any) AuditEvent {
	ri, _ := ctx.Value(requestInfoKey{}).(requestInfo)
	return AuditEvent{ID: ids.New("ev"), Stream: SystemStream, At: now.UTC().Truncate(time.Microsecond), Actor: actor,
		Action: action, Reason: reason, Detail: detail(detailFields), RequestID: ri.id, ClientAddr: ri.addr}
}
