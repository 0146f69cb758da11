package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/opshandoff/handoff/domain"
	"gorm.io/gorm"
)

var _ domain.BatchKeeper = (*Store)(nil)

// batchResultRow is one applied batch's record (migration 00011).
type batchResultRow struct {
	ID        string `gorm:"primaryKey"`
	AppliedAt time.Time
	Record    string // batchRecordJSON, which names who applied it
}

func (batchResultRow) TableName() string { return "batch_results" }

// batchRecordJSON is the stored shape of a domain.BatchRecord: the domain
// carries no tags, and the closed types are kept as their names.
type batchRecordJSON struct {
	Kind          string           `json:"kind"`
	Action        string           `json:"action,omitempty"`
	Then          string           `json:"then,omitempty"`
	Assignee      personJSON       `json:"assignee"`
	Reason        string           `json:"reason"`
	RiskConfirmed bool             `json:"risk_confirmed,omitempty"`
	By            personJSON       `json:"by"`
	Applied       int              `json:"applied"`
	Skipped       int              `json:"skipped"`
	Items         []batchItemJSON  `json:"items"`
	Versions      map[string]int64 `json:"previewed_versions"`
}

type personJSON struct {
	Issuer  string `json:"issuer,omitempty"`
	Subject string `json:"subject,omitempty"`
	Email   string `json:"email,omitempty"`
	Name    string `json:"name,omitempty"`
	Role    string `json:"role,omitempty"`
}

type batchItemJSON struct {
	ID      string `json:"id"`
	Key     string `json:"key"`
	From    string `json:"from,omitempty"`
	To      string `json:"to,omitempty"`
	Version int64  `json:"version"`
	Outcome string `json:"outcome"`
	Why     string `json:"why,omitempty"`
	Code    string `json:"code,omitempty"`
	Risk    string `json:"risk,omitempty"`
}

// KeepBatch implements domain.BatchKeeper.
func (s *Store) KeepBatch(ctx context.Context, r domain.BatchRecord) error {
	j := batchRecordJSON{Kind: string(r.Batch.Kind), Reason: r.Batch.Reason, RiskConfirmed: r.Batch.RiskConfirmed,
		Assignee: personJSON{Issuer: r.Batch.Assignee.Issuer, Subject: r.Batch.Assignee.Subject, Email: r.Batch.Assignee.Email,
			Name: r.Batch.Assignee.Name},
		By:      personJSON{Issuer: r.By.Issuer, Subject: r.By.Subject, Email: r.By.Email, Name: r.By.Name, Role: r.By.Role.String()},
		Applied: r.Result.Applied, Skipped: r.Result.Skipped, Versions: map[string]int64{}}
	if r.Batch.Kind == domain.BatchResolve {
		j.Action = r.Batch.Action.String()
		if r.Batch.Then != (domain.ResolveAction{}) {
			j.Then = r.Batch.Then.String()
		}
	}
	for _, it := range r.Batch.Items {
		j.Versions[it.ID] = it.ExpectedVersion
	}
	for _, it := range r.Result.Items {
		j.Items = append(j.Items, batchItemJSON{ID: it.ID, Key: it.Key, From: stateName(it.From), To: stateName(it.To),
			Version: it.Version, Outcome: it.Outcome, Why: it.Why, Code: string(it.Code), Risk: it.Risk})
	}
	raw, err := json.Marshal(j)
	if err != nil {
		return domain.Errorf(domain.EInternal, "batch record: %v", err)
	}
	row := batchResultRow{ID: r.Result.ID,
		AppliedAt: r.At.UTC().Truncate(time.Microsecond), Record: string(raw)}
	if err := s.db.WithContext(ctx).Create(&row).Error; err != nil {
		return translate(err, "batch")
	}
	return nil
}

// KeptBatch implements domain.BatchKeeper.
func (s *Store) KeptBatch(ctx context.Context, id string) (domain.BatchRecord, error) {
	var row batchResultRow
	err := s.db.WithContext(ctx).Where("id = ?", id).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return domain.BatchRecord{}, domain.Errorf(domain.ENotFound, "no batch %s", id)
	} else if err != nil {
		return domain.BatchRecord{}, translate(err, "batch")
	}
	var j batchRecordJSON
	if err := json.Unmarshal([]byte(row.Record), &j); err != nil {
		return domain.BatchRecord{}, domain.Errorf(domain.EInternal, "batch %s: %v", id, err)
	}
	return j.toDomain(row)
}

func (j batchRecordJSON) toDomain(row batchResultRow) (domain.BatchRecord, error) {
	r := domain.BatchRecord{At: row.AppliedAt.UTC(),
		By: domain.Actor{Kind: domain.ActorPerson, Issuer: j.By.Issuer, Subject: j.By.Subject, Email: j.By.Email, Name: j.By.Name},
		Batch: domain.Batch{Kind: domain.BatchKind(j.Kind), Reason: j.Reason, RiskConfirmed: j.RiskConfirmed,
			Assignee: domain.Person{Issuer: j.Assignee.Issuer, Subject: j.Assignee.Subject, Email: j.Assignee.Email, Name: j.Assignee.Name}},
		Result: domain.BatchResult{ID: row.ID, Applied: j.Applied, Skipped: j.Skipped, Kept: true}}
	var err error
	if j.By.Role != "" {
		if r.By.Role, err = domain.ParseRole(j.By.Role); err != nil {
			return r, fmt.Errorf("batch %s: %w", row.ID, err)
		}
	}
	if j.Action != "" {
		if r.Batch.Action, err = domain.ParseResolveAction(j.Action); err != nil {
			return r, fmt.Errorf("batch %s: %w", row.ID, err)
		}
	}
	if j.Then != "" {
		if r.Batch.Then, err = domain.ParseResolveAction(j.Then); err != nil {
			return r, fmt.Errorf("batch %s: %w", row.ID, err)
		}
	}
	for _, it := range j.Items {
		out := domain.BatchItemResult{ID: it.ID, Key: it.Key, Version: it.Version, Outcome: it.Outcome, Why: it.Why,
			Code: domain.Code(it.Code), Risk: it.Risk}
		if out.From, err = parseStateName(it.From); err == nil {
			out.To, err = parseStateName(it.To)
		}
		if err != nil {
			return r, fmt.Errorf("batch %s: %w", row.ID, err)
		}
		r.Result.Items = append(r.Result.Items, out)
		r.Batch.Items = append(r.Batch.Items, domain.BatchItem{ID: it.ID, ExpectedVersion: j.Versions[it.ID]})
	}
	return r, nil
}

// stateName is a state's name, "" for the zero state (an item never found).
func stateName(s domain.State) string {
	if s == (domain.State{}) {
		return ""
	}
	return s.String()
}

func parseStateName(v string) (domain.State, error) {
	if v == "" {
		return domain.State{}, nil
	}
	return domain.ParseState(v)
}
