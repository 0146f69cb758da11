package store

import (
	"encoding/json"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// operationRow is an operation as the operations table holds it.
type operationRow struct {
	ID                     string `gorm:"column:id;primaryKey"`
	Namespace              string `gorm:"column:namespace"`
	Key                    string `gorm:"column:key"`
	Type                   string `gorm:"column:type"`
	State                  string `gorm:"column:state"`
	Version                int64  `gorm:"column:version"`
	EventID                string `gorm:"column:event_id"`
	Source                 string `gorm:"column:source"`
	CorrelationID          string `gorm:"column:correlation_id"`
	CausedBy               string `gorm:"column:caused_by"`
	Supersedes             string `gorm:"column:supersedes"`
	SupersededBy           string `gorm:"column:superseded_by"`
	Fingerprint            string `gorm:"column:fingerprint"`
	IdentityHash           string `gorm:"column:identity_hash"`
	ContentVersion         int    `gorm:"column:content_version"`
	ContentSHA256          string `gorm:"column:content_sha256"`
	Content                string `gorm:"column:content"`
	ContentAuthor          string `gorm:"column:content_author"`
	ApprovalVersion        *int
	ApprovalBy             *string
	ApprovalAt             *time.Time
	ProviderKey            string
	ProviderKeyFirstSentAt *time.Time
	// ProviderKeyContentVersion: the content version the provider key was
	// first sent with; 0 before.
	ProviderKeyContentVersion int
	Attempts                  int
	RetryFrom                 int
	FirstAttemptAt            *time.Time
	LeaseToken                int64
	LeaseWorker               *string
	LeaseExpiresAt            *time.Time
	NextRetryAt               *time.Time
	ResultRef                 *string
	ResultData                *string
	LastErrorClass            *string
	LastErrorCode             *string
	LastErrorMessage          *string
	Assignee                  string
	AssigneeIssuer            string
	AssigneeSubject           string
	ResolutionAction          *string
	ResolutionBy              *string
	ResolutionReason          *string
	ResolutionAt              *time.Time
	AuditHead                 string
	DeskEnteredAt             *time.Time
	AssignedAt                *time.Time
	EscalatedAt               *time.Time
	CreatedAt                 time.Time `gorm:"column:created_at;autoCreateTime:false"`
	UpdatedAt                 time.Time `gorm:"column:updated_at;autoUpdateTime:false"`
	// ContentPurgedAt is read with the row but never written with it: only
	// PurgeContent sets it (content_purge.go).
	ContentPurgedAt *time.Time `gorm:"column:content_purged_at;->"`
}

func (operationRow) TableName() string { return "operations" }

// operationWithClock is a loaded row and the database's clock at the read.
type operationWithClock struct {
	Row   operationRow `gorm:"embedded"`
	DBNow time.Time    `gorm:"column:db_now"`
}

func toOperationRow(op domain.Operation) operationRow {
	r := operationRow{
		ID: op.ID, Namespace: op.Namespace, Key: op.Key, Type: op.Type, State: op.State.String(),
		Version: op.Version, EventID: op.EventID, Source: op.Source, CorrelationID: op.CorrelationID,
		CausedBy: op.CausedBy, Supersedes: op.Supersedes, SupersededBy: op.SupersededBy,
		Fingerprint: op.Fingerprint, IdentityHash: op.IdentityHash, ContentVersion: op.ContentVersion, ContentSHA256: op.ContentSHA256,
		Content: string(op.Content), ContentAuthor: op.ContentAuthor,
		ProviderKey: op.ProviderKey, ProviderKeyFirstSentAt: utcPtr(op.ProviderKeyFirstSentAt),
		ProviderKeyContentVersion: op.ProviderKeySentVersion,
		Attempts:                  op.Attempts, RetryFrom: op.RetryFrom, FirstAttemptAt: utcPtr(op.FirstAttemptAt),
		LeaseToken: op.LeaseToken, NextRetryAt: utcPtr(op.NextRetryAt),
		Assignee: op.Assignee, AssigneeIssuer: op.AssigneeIssuer, AssigneeSubject: op.AssigneeSubject, AuditHead: op.AuditHead,
		DeskEnteredAt: utcPtr(op.DeskEnteredAt), AssignedAt: utcPtr(op.AssignedAt), EscalatedAt: utcPtr(op.EscalatedAt),
		CreatedAt: op.CreatedAt.UTC(), UpdatedAt: op.UpdatedAt.UTC(),
	}
	if a := op.Approval; a != nil {
		r.ApprovalVersion, r.ApprovalBy, r.ApprovalAt = &a.ContentVersion, &a.By, utcPtr(&a.At)
	}
	if l := op.Lease; l != nil {
		r.LeaseWorker, r.LeaseExpiresAt = &l.Worker, utcPtr(&l.ExpiresAt)
	}
	if res := op.Result; res != nil {
		r.ResultRef = &res.Ref
		if len(res.Data) > 0 {
			r.ResultData = ptr(string(res.Data))
		}
	}
	if e := op.LastError; e != nil {
		r.LastErrorClass, r.LastErrorCode, r.LastErrorMessage = ptr(e.Class.String()), &e.Code, &e.Message
	}
	if res := op.Resolution; res != nil {
		r.ResolutionAction, r.ResolutionBy, r.ResolutionReason, r.ResolutionAt = &res.Action, &res.By, &res.Reason, utcPtr(&res.At)
	}
	return r
}

func (r operationRow) toDomain() (domain.Operation, error) {
	state, err := domain.ParseState(r.State)
	if err != nil {
		return domain.Operation{}, err
	}
	op := domain.Operation{
		ID: r.ID, Namespace: r.Namespace, Key: r.Key, Type: r.Type, State: state, Version: r.Version,
		EventID: r.EventID, Source: r.Source, CorrelationID: r.CorrelationID, CausedBy: r.CausedBy,
		Supersedes: r.Supersedes, SupersededBy: r.SupersededBy, Fingerprint: r.Fingerprint, IdentityHash: r.IdentityHash,
		ContentVersion: r.ContentVersion, ContentSHA256: r.ContentSHA256, Content: json.RawMessage(r.Content),
		ContentAuthor: r.ContentAuthor, ProviderKey: r.ProviderKey, ProviderKeyFirstSentAt: utcPtr(r.ProviderKeyFirstSentAt),
		ProviderKeySentVersion: r.ProviderKeyContentVersion,
		Attempts:               r.Attempts, RetryFrom: r.RetryFrom, FirstAttemptAt: utcPtr(r.FirstAttemptAt),
		LeaseToken: r.LeaseToken, NextRetryAt: utcPtr(r.NextRetryAt), Assignee: r.Assignee,
		AssigneeIssuer: r.AssigneeIssuer, AssigneeSubject: r.AssigneeSubject,
		AuditHead: r.AuditHead, CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
		DeskEnteredAt: utcPtr(r.DeskEnteredAt), AssignedAt: utcPtr(r.AssignedAt), EscalatedAt: utcPtr(r.EscalatedAt),
	}
	if r.ApprovalVersion != nil {
		op.Approval = &domain.Approval{ContentVersion: *r.ApprovalVersion, By: deref(r.ApprovalBy), At: derefTime(r.ApprovalAt)}
	}
	if r.LeaseExpiresAt != nil {
		op.Lease = &domain.Lease{Token: r.LeaseToken, Worker: deref(r.LeaseWorker), ExpiresAt: r.LeaseExpiresAt.UTC()}
	}
	if r.ResultRef != nil {
		op.Result = &domain.Result{Ref: *r.ResultRef}
		if r.ResultData != nil {
			op.Result.Data = json.RawMessage(*r.ResultData)
		}
	}
	if r.LastErrorClass != nil {
		class, err := domain.ParseErrorClass(*r.LastErrorClass)
		if err != nil {
			return domain.Operation{}, err
		}
		op.LastError = &domain.ErrorInfo{Class: class, Code: deref(r.LastErrorCode), Message: deref(r.LastErrorMessage)}
	}
	if r.ResolutionAction != nil {
		op.Resolution = &domain.Resolution{Action: *r.ResolutionAction, By: deref(r.ResolutionBy),
			Reason: deref(r.ResolutionReason), At: derefTime(r.ResolutionAt)}
	}
	return op, nil
}

func ptr[T any](v T) *T { return &v }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func derefTime(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
