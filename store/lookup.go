package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/opshandoff/handoff/domain"
	"gorm.io/gorm"
)

// lookups is the store's part for the lookups that reconciliation runs.
type lookups struct{ *conn }

var _ domain.LookupStore = (*lookups)(nil)

// lookupRow is one attempt's lookup (migration 00015).
type lookupRow struct {
	OperationID string `gorm:"column:operation_id;primaryKey"`
	Attempt     int    `gorm:"column:attempt;primaryKey"`
	OpType      string
	DueAt       time.Time
	ClaimToken  int64
	StartedAt   *time.Time
	Tries       string
	Conclusion  string
	CreatedAt   time.Time `gorm:"column:created_at;autoCreateTime:false"`
}

func (lookupRow) TableName() string { return "lookups" }

// lookupTryJSON is a try as the tries column holds it.
type lookupTryJSON struct {
	At        time.Time `json:"at"`
	Method    string    `json:"method"`
	URL       string    `json:"url"`
	Status    int       `json:"status,omitempty"`
	LatencyMs int64     `json:"latency_ms"`
	Result    string    `json:"result"`
	Ref       string    `json:"ref,omitempty"`
	State     string    `json:"state,omitempty"`
	Conflicts []string  `json:"conflicts,omitempty"`
	Bound     string    `json:"bound,omitempty"`
	Error     string    `json:"error,omitempty"`
}

func (r lookupRow) toDomain() domain.LookupClaim {
	c := domain.LookupClaim{OperationID: r.OperationID, Attempt: r.Attempt, ClaimToken: r.ClaimToken, StartedAt: utcPtr(r.StartedAt)}
	var tries []lookupTryJSON
	_ = json.Unmarshal([]byte(r.Tries), &tries)
	for _, t := range tries {
		res, _ := domain.ParseLookupResult(t.Result)
		c.Tries = append(c.Tries, domain.LookupTry{At: t.At.UTC(), Method: t.Method, URL: t.URL, Status: t.Status,
			LatencyMs: t.LatencyMs, Result: res, Ref: t.Ref, State: t.State, Conflicts: t.Conflicts, Bound: t.Bound, Error: t.Error})
	}
	return c
}

func triesJSON(ts []domain.LookupTry) string {
	out := make([]lookupTryJSON, len(ts))
	for i, t := range ts {
		out[i] = lookupTryJSON{At: t.At.UTC(), Method: t.Method, URL: t.URL, Status: t.Status, LatencyMs: t.LatencyMs,
			Result: t.Result.String(), Ref: t.Ref, State: t.State, Conflicts: t.Conflicts, Bound: t.Bound, Error: t.Error}
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// awaiting is the condition on operations o awaiting their lookup, as
// operations_awaiting_lookup's predicate spells it (migration 00029).
const awaiting = "o.desk_state = 'unknown_outcome' AND o.desk_entered_at IS NULL"

// ClaimLookups starts a lookup for every operation of types newly awaiting
// one, closes those whose operation moved on, and claims the due ones.
func (s *lookups) ClaimLookups(ctx context.Context, types []string, now time.Time, lease time.Duration, limit int) ([]domain.LookupClaim, error) {
	if len(types) == 0 || limit <= 0 {
		return nil, nil
	}
	var out []domain.LookupClaim
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		out = out[:0]
		if err := tx.Exec("INSERT INTO lookups (operation_id, attempt, op_type, due_at, created_at)"+
			" SELECT o.id, o.attempts, o.type, ?, ? FROM operations o WHERE "+awaiting+" AND o.type IN ?"+
			" AND NOT EXISTS (SELECT 1 FROM lookups l WHERE l.operation_id = o.id AND l.attempt = o.attempts)"+
			" ON CONFLICT (operation_id, attempt) DO NOTHING", now.UTC(), now.UTC(), types).Error; err != nil {
			return err
		}
		if err := tx.Exec("UPDATE lookups SET conclusion = 'superseded' WHERE conclusion = '' AND due_at <= ?"+
			" AND NOT EXISTS (SELECT 1 FROM operations o WHERE o.id = lookups.operation_id AND o.attempts = lookups.attempt AND "+awaiting+")",
			now.UTC()).Error; err != nil {
			return err
		}
		sql := "SELECT l.operation_id, l.attempt FROM lookups l WHERE l.conclusion = '' AND l.due_at <= ? AND l.op_type IN ?" +
			" ORDER BY l.due_at LIMIT ?"
		sql += s.dialect.skipLocked()
		var keys []struct {
			OperationID string
			Attempt     int
		}
		if err := tx.Raw(sql, now.UTC(), types, limit).Scan(&keys).Error; err != nil {
			return err
		}
		for _, k := range keys {
			var r lookupRow
			if err := tx.Raw("UPDATE lookups SET due_at = ?, claim_token = claim_token + 1 WHERE operation_id = ? AND attempt = ?"+
				" RETURNING *", now.Add(lease).UTC(), k.OperationID, k.Attempt).Scan(&r).Error; err != nil {
				return err
			}
			out = append(out, r.toDomain())
		}
		return nil
	})
	if err != nil {
		return nil, translate(err, "lookup")
	}
	return out, nil
}

// RecordLookupTry appends a try with a compare-and-set on the claim.
func (s *lookups) RecordLookupTry(ctx context.Context, c domain.LookupClaim, t domain.LookupTry, next time.Time, conclusion string) (bool, error) {
	set := map[string]any{"tries": triesJSON(append(append([]domain.LookupTry(nil), c.Tries...), t)),
		"started_at": gorm.Expr("COALESCE(started_at, ?)", t.At.UTC()), "conclusion": conclusion}
	if !next.IsZero() {
		set["due_at"] = next.UTC()
	}
	res := s.db.WithContext(ctx).Model(&lookupRow{}).
		Where("operation_id = ? AND attempt = ? AND claim_token = ? AND conclusion = ''", c.OperationID, c.Attempt, c.ClaimToken).Updates(set)
	if res.Error != nil {
		return false, translate(res.Error, "lookup")
	}
	return res.RowsAffected == 1, nil
}

// LookupsOf lists an operation's lookups, newest attempt first.
func (s *lookups) LookupsOf(ctx context.Context, operationID string) ([]domain.LookupClaim, error) {
	var rows []lookupRow
	if err := s.db.WithContext(ctx).Where("operation_id = ?", operationID).Order("attempt DESC").Find(&rows).Error; err != nil {
		return nil, translate(err, "lookup")
	}
	out := make([]domain.LookupClaim, len(rows))
	for i, r := range rows {
		out[i] = r.toDomain()
	}
	return out, nil
}

// CloseLookup records a lookup's conclusion, with a compare-and-set on the
// claim.
func (s *lookups) CloseLookup(ctx context.Context, c domain.LookupClaim, conclusion string) error {
	err := s.db.WithContext(ctx).Model(&lookupRow{}).
		Where("operation_id = ? AND attempt = ? AND claim_token = ? AND conclusion = ''", c.OperationID, c.Attempt, c.ClaimToken).
		Update("conclusion", conclusion).Error
	return translate(err, "lookup")
}
