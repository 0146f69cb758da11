package store

import (
	"encoding/json"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// attemptRow is one row of attempts.
type attemptRow struct {
	ID           string `gorm:"column:id;primaryKey"`
	OperationID  string
	Number       int
	Worker       string
	LeaseToken   int64
	ClaimedAt    time.Time
	BeganAt      *time.Time
	SettledAt    *time.Time
	Outcome      string
	ErrorClass   *string
	ErrorCode    *string
	ErrorMessage *string
	SettleSHA256 *string `gorm:"column:settle_sha256"`
}

func (attemptRow) TableName() string { return "attempts" }

func toAttemptRow(a domain.Attempt) attemptRow {
	r := attemptRow{ID: a.ID, OperationID: a.OperationID, Number: a.Number, Worker: a.Worker,
		LeaseToken: a.LeaseToken, ClaimedAt: a.ClaimedAt.UTC(), BeganAt: utcPtr(a.BeganAt),
		SettledAt: utcPtr(a.SettledAt), Outcome: a.Outcome}
	if e := a.Error; e != nil {
		r.ErrorClass, r.ErrorCode, r.ErrorMessage = ptr(e.Class.String()), &e.Code, &e.Message
	}
	if a.SettleSHA256 != "" {
		r.SettleSHA256 = &a.SettleSHA256
	}
	return r
}

func (r attemptRow) toDomain() domain.Attempt {
	a := domain.Attempt{ID: r.ID, OperationID: r.OperationID, Number: r.Number, Worker: r.Worker,
		LeaseToken: r.LeaseToken, ClaimedAt: r.ClaimedAt.UTC(), BeganAt: utcPtr(r.BeganAt),
		SettledAt: utcPtr(r.SettledAt), Outcome: r.Outcome, SettleSHA256: deref(r.SettleSHA256)}
	if r.ErrorClass != nil {
		class, _ := domain.ParseErrorClass(*r.ErrorClass)
		a.Error = &domain.ErrorInfo{Class: class, Code: deref(r.ErrorCode), Message: deref(r.ErrorMessage)}
	}
	return a
}

// contentRow is one content snapshot.
type contentRow struct {
	OperationID string `gorm:"column:operation_id;primaryKey"`
	Version     int    `gorm:"column:version;primaryKey"`
	Content     string
	SHA256      string `gorm:"column:sha256"`
	CreatedBy   string
	CreatedAt   time.Time `gorm:"autoCreateTime:false"`
	Reason      string
	ApprovedBy  *string
	ApprovedAt  *time.Time
	RejectedBy  *string
	RejectedAt  *time.Time

	// The reviser's (issuer, subject); "" for the registering workflow.
	CreatedByIssuer  string
	CreatedBySubject string
}

func (contentRow) TableName() string { return "content_versions" }

func (r contentRow) toDomain() domain.ContentVersion {
	return domain.ContentVersion{OperationID: r.OperationID, Version: r.Version, Content: json.RawMessage(r.Content),
		SHA256: r.SHA256, CreatedBy: r.CreatedBy, CreatedByIssuer: r.CreatedByIssuer, CreatedBySubject: r.CreatedBySubject,
		CreatedAt: r.CreatedAt.UTC(), Reason: r.Reason,
		ApprovedBy: deref(r.ApprovedBy), ApprovedAt: utcPtr(r.ApprovedAt),
		RejectedBy: deref(r.RejectedBy), RejectedAt: utcPtr(r.RejectedAt)}
}

// auditRow is one audit event. Pos orders all events; (stream, seq) orders
// one stream.
type auditRow struct {
	Pos            int64  `gorm:"column:pos;primaryKey;autoIncrement"`
	ID             string `gorm:"column:id"`
	Stream         string
	Seq            int64
	OperationID    string
	Namespace      string
	At             time.Time
	ActorKind      string
	ActorName      string
	ActorNamespace string
	ActorIssuer    string
	ActorSubject   string
	ActorEmail     string
	ActorRole      string
	Action         string
	FromState      string
	ToState        string
	Reason         string
	Detail         string
	RequestID      string
	ClientAddr     string
	PrevHash       string
	Hash           string
}

func (auditRow) TableName() string { return "audit_events" }

func toAuditRow(e domain.AuditEvent) auditRow {
	return auditRow{ID: e.ID, Stream: e.Stream, Seq: e.Seq, OperationID: e.OperationID, Namespace: e.Namespace,
		At: e.At.UTC(), ActorKind: e.Actor.Kind.String(), ActorName: e.Actor.Name, ActorNamespace: e.Actor.Namespace,
		ActorIssuer: e.Actor.Issuer, ActorSubject: e.Actor.Subject, ActorEmail: e.Actor.Email,
		ActorRole: e.Actor.Role.String(), Action: e.Action, FromState: e.FromState, ToState: e.ToState,
		Reason: e.Reason, Detail: string(e.Detail), RequestID: e.RequestID, ClientAddr: e.ClientAddr,
		PrevHash: e.PrevHash, Hash: e.Hash}
}

func (r auditRow) toDomain() domain.AuditEvent {
	kind, _ := domain.ParseActorKind(r.ActorKind)
	role, _ := domain.ParseRole(r.ActorRole)
	e := domain.AuditEvent{ID: r.ID, Stream: r.Stream, Seq: r.Seq, OperationID: r.OperationID, Namespace: r.Namespace,
		At: r.At.UTC(), Actor: domain.Actor{Kind: kind, Name: r.ActorName, Namespace: r.ActorNamespace,
			Issuer: r.ActorIssuer, Subject: r.ActorSubject, Email: r.ActorEmail, Role: role},
		Action: r.Action, FromState: r.FromState, ToState: r.ToState, Reason: r.Reason,
		RequestID: r.RequestID, ClientAddr: r.ClientAddr, PrevHash: r.PrevHash, Hash: r.Hash}
	if r.Detail != "" {
		e.Detail = json.RawMessage(r.Detail)
	}
	return e
}
