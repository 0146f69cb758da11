package store

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/opshandoff/handoff/domain"
	"gorm.io/gorm"
)

// outbox is the store's part for notifications: their claims and deliveries,
// escalations and the desk's gauges.
type outbox struct{ *conn }

var _ domain.OutboxStore = (*outbox)(nil)

// notificationRow is an outbox row.
type notificationRow struct {
	ID            string `gorm:"column:id;primaryKey"`
	OperationID   string
	Namespace     string
	OpType        string
	Type          string `gorm:"column:type"`
	URL           string `gorm:"column:url"`
	SecretEnv     string
	Format        string
	Summary       string
	CreatedAt     time.Time `gorm:"column:created_at;autoCreateTime:false"`
	Status        string
	Attempts      int
	NextAttemptAt time.Time
	ClaimToken    int64
	DeliveredAt   *time.Time
	LastStatus    int
	LastError     string
}

func (notificationRow) TableName() string { return "notifications" }

func (r notificationRow) toDomain() domain.NotificationRecord {
	summary, unreadable := decodeSummary(r.Summary)
	return domain.NotificationRecord{
		Notification: domain.Notification{ID: r.ID, OperationID: r.OperationID, Namespace: r.Namespace, OpType: r.OpType,
			Type: r.Type, Destination: domain.Destination{URL: r.URL, SecretEnv: r.SecretEnv, Format: r.Format},
			Summary: summary, Unreadable: unreadable, CreatedAt: r.CreatedAt.UTC()},
		Status: r.Status, Attempts: r.Attempts, NextAttemptAt: r.NextAttemptAt.UTC(), ClaimToken: r.ClaimToken,
		DeliveredAt: utcPtr(r.DeliveredAt), LastStatus: r.LastStatus, LastError: r.LastError,
	}
}

// notificationAttemptRow is one delivery attempt.
type notificationAttemptRow struct {
	NotificationID string `gorm:"column:notification_id;primaryKey"`
	Number         int    `gorm:"column:number;primaryKey"`
	At             time.Time
	StatusCode     int
	LatencyMs      int64
	Response       string
	Error          string
	Outcome        string
}

func (notificationAttemptRow) TableName() string { return "notification_attempts" }

// toNotificationRow is a change's outbox row, due at once.
func toNotificationRow(n domain.Notification) notificationRow {
	return notificationRow{ID: n.ID, OperationID: n.OperationID, Namespace: n.Namespace, OpType: n.OpType,
		Type: n.Type, URL: n.Destination.URL, SecretEnv: n.Destination.SecretEnv, Format: n.Destination.Format,
		Summary: encodeSummary(n.Summary), CreatedAt: n.CreatedAt.UTC(), Status: domain.NotificationPending,
		NextAttemptAt: n.CreatedAt.UTC()}
}

// EscalationDue lists unassigned, unescalated operations waiting on a
// person for longer than their type's escalate_after. Escalation goes by the
// process's clock on both dialects (minutes matter here, not microseconds),
// which tests can move with SetClock.
func (s *outbox) EscalationDue(ctx context.Context, after map[string]time.Duration, limit int) ([]domain.Operation, time.Time, error) {
	now := s.now().UTC()
	var out []domain.Operation
	for typ, d := range after {
		if len(out) >= limit {
			break
		}
		var rows []operationWithClock
		sql := "SELECT operations.*, " + s.dialect.clockSQL() + " AS db_now FROM operations WHERE state IN ('unknown_outcome', 'failed_terminal', 'awaiting_approval')" +
			" AND type = ? AND assignee = '' AND escalated_at IS NULL AND desk_entered_at <= ? ORDER BY desk_entered_at LIMIT ?"
		args := []any{typ, now.Add(-d), limit - len(out)}
		if err := s.db.WithContext(ctx).Raw(sql, args...).Scan(&rows).Error; err != nil {
			return nil, time.Time{}, translate(err, "operation")
		}
		for _, r := range rows {
			op, err := r.Row.toDomain()
			if err != nil {
				return nil, time.Time{}, domain.Wrap(domain.EInternal, err, "unreadable operation row")
			}
			out = append(out, op)
		}
	}
	return out, now, nil
}

// ClaimNotifications takes due notifications for this sender. On PostgreSQL
// rows another replica is claiming are skipped (SKIP LOCKED); the claim is
// a short transaction and no network call happens inside it.
func (s *outbox) ClaimNotifications(ctx context.Context, now time.Time, lease time.Duration, limit, perURL int, skip []string) ([]domain.NotificationRecord, error) {
	var out []domain.NotificationRecord
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		out = out[:0]
		// At most perURL rows of one destination, so that one destination's
		// backlog cannot fill the batch.
		inner := "SELECT id, ROW_NUMBER() OVER (PARTITION BY url ORDER BY next_attempt_at, id) AS rn FROM notifications" +
			" WHERE status = 'pending' AND next_attempt_at <= ?"
		args := []any{now.UTC()}
		if len(skip) > 0 {
			inner += " AND url NOT IN ?"
			args = append(args, skip)
		}
		sql := "SELECT id FROM notifications WHERE id IN (SELECT id FROM (" + inner + ") ranked WHERE rn <= ?)" +
			" AND status = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?"
		args = append(args, max(perURL, 1), now.UTC(), limit)
		sql += s.dialect.skipLocked()
		var ids []string
		if err := tx.Raw(sql, args...).Scan(&ids).Error; err != nil {
			return err
		}
		if len(ids) == 0 {
			return nil
		}
		if err := tx.Exec("UPDATE notifications SET next_attempt_at = ?, claim_token = claim_token + 1 WHERE id IN ?",
			now.Add(lease).UTC(), ids).Error; err != nil {
			return err
		}
		var rows []notificationRow
		if err := tx.Where("id IN ?", ids).Order("created_at, id").Find(&rows).Error; err != nil {
			return err
		}
		for _, r := range rows {
			out = append(out, r.toDomain())
		}
		return nil
	})
	if err != nil {
		return nil, translate(err, "notification")
	}
	return out, nil
}

// RecordDelivery writes the attempt and the outcome, with a compare-and-set
// on the claim: a sender whose lease ran out and whose row was claimed again
// records nothing.
func (s *outbox) RecordDelivery(ctx context.Context, r domain.DeliveryRecord) (bool, error) {
	ok := false
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		set := map[string]any{"status": r.Status, "attempts": gorm.Expr("attempts + 1"),
			"last_status": r.Attempt.StatusCode, "last_error": r.Attempt.Error}
		if !r.Next.IsZero() {
			set["next_attempt_at"] = r.Next.UTC()
		}
		if r.Status == domain.NotificationDelivered {
			set["delivered_at"] = r.Attempt.At.UTC()
		}
		res := tx.Model(&notificationRow{}).Where("id = ? AND claim_token = ? AND status = 'pending'", r.ID, r.ClaimToken).Updates(set)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return nil
		}
		var n int
		if err := tx.Raw("SELECT attempts FROM notifications WHERE id = ?", r.ID).Scan(&n).Error; err != nil {
			return err
		}
		a := r.Attempt
		ok = true
		return tx.Create(&notificationAttemptRow{NotificationID: r.ID, Number: n, At: a.At.UTC(), StatusCode: a.StatusCode,
			LatencyMs: a.Latency.Milliseconds(), Response: a.Response, Error: a.Error, Outcome: a.Outcome}).Error
	})
	if err != nil {
		return false, translate(err, "notification")
	}
	return ok, nil
}

// Notifications lists an operation's notifications, oldest first, with
// every attempt.
func (s *outbox) Notifications(ctx context.Context, operationID string) ([]domain.NotificationRecord, error) {
	var rows []notificationRow
	db := s.db.WithContext(ctx)
	if err := db.Where("operation_id = ?", operationID).Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, translate(err, "notification")
	}
	return withHistory(db, rows)
}

// withHistory is the notifications with every attempt of each, read in
// one query.
func withHistory(db *gorm.DB, rows []notificationRow) ([]domain.NotificationRecord, error) {
	out := make([]domain.NotificationRecord, len(rows))
	ids := make([]string, len(rows))
	at := map[string]int{}
	for i, r := range rows {
		out[i], ids[i], at[r.ID] = r.toDomain(), r.ID, i
	}
	if len(ids) == 0 {
		return out, nil
	}
	var atts []notificationAttemptRow
	if err := db.Where("notification_id IN ?", ids).Order("notification_id, number").Find(&atts).Error; err != nil {
		return nil, translate(err, "notification attempt")
	}
	for _, a := range atts {
		i := at[a.NotificationID]
		out[i].History = append(out[i].History, domain.DeliveryAttempt{NotificationID: a.NotificationID, Number: a.Number,
			At: a.At.UTC(), StatusCode: a.StatusCode, Latency: time.Duration(a.LatencyMs) * time.Millisecond,
			Response: a.Response, Error: a.Error, Outcome: a.Outcome})
	}
	return out, nil
}

// NotificationDestinations summarises every destination's deliveries.
func (s *outbox) NotificationDestinations(ctx context.Context) ([]domain.DestinationStats, error) {
	var rows []struct {
		URL       string
		Format    string
		N         int
		Delivered int
		Failed    int
		Pending   int
		Attempts  int
	}
	db := s.db.WithContext(ctx)
	err := db.Raw("SELECT url, MIN(format) AS format, COUNT(*) AS n," +
		" SUM(CASE WHEN status = 'delivered' THEN 1 ELSE 0 END) AS delivered," +
		" SUM(CASE WHEN status = 'failed' THEN 1 ELSE 0 END) AS failed," +
		" SUM(CASE WHEN status = 'pending' THEN 1 ELSE 0 END) AS pending," +
		" SUM(attempts) AS attempts FROM notifications GROUP BY url ORDER BY url").Scan(&rows).Error
	if err != nil {
		return nil, translate(err, "notification")
	}
	var fails []struct {
		URL    string
		N      int
		LastAt string
	}
	if err := db.Raw("SELECT n.url, COUNT(*) AS n, MAX(a.at) AS last_at FROM notification_attempts a JOIN notifications n ON n.id = a.notification_id" +
		" WHERE a.outcome <> 'delivered' GROUP BY n.url").Scan(&fails).Error; err != nil {
		return nil, translate(err, "notification attempt")
	}
	out := make([]domain.DestinationStats, len(rows))
	for i, r := range rows {
		out[i] = domain.DestinationStats{URL: r.URL, Format: r.Format, Notifications: r.N, Delivered: r.Delivered,
			Failed: r.Failed, Pending: r.Pending, Attempts: r.Attempts}
		for _, f := range fails {
			if f.URL != r.URL {
				continue
			}
			out[i].FailedAttempts = f.N
			var last notificationAttemptRow
			if err := db.Raw("SELECT a.* FROM notification_attempts a JOIN notifications n ON n.id = a.notification_id"+
				" WHERE n.url = ? AND a.outcome <> 'delivered' ORDER BY a.at DESC LIMIT 1", r.URL).Scan(&last).Error; err != nil {
				return nil, translate(err, "notification attempt")
			}
			out[i].LastError, out[i].LastErrorAt = attemptSummary(last), utcPtr(&last.At)
		}
	}
	return out, nil
}

func attemptSummary(a notificationAttemptRow) string {
	if a.Error != "" {
		return a.Error
	}
	msg := "HTTP " + strconv.Itoa(a.StatusCode)
	if a.Response != "" {
		msg += ": " + a.Response
	}
	return msg
}

// Resend makes a delivered or failed notification pending again, due at
// now, keeping its id (receivers dedupe by it), and appends e to the system
// audit stream in the same transaction.
func (s *outbox) Resend(ctx context.Context, id string, now time.Time, e domain.AuditEvent) (domain.NotificationRecord, error) {
	var row notificationRow
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := s.lockSystem(tx); err != nil {
			return err
		}
		res := tx.Model(&notificationRow{}).Where("id = ?", id).
			Updates(map[string]any{"status": domain.NotificationPending, "next_attempt_at": now.UTC(), "claim_token": gorm.Expr("claim_token + 1")})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return domain.Errorf(domain.ENotFound, "no such notification")
		}
		if err := tx.Where("id = ?", id).First(&row).Error; err != nil {
			return err
		}
		_, err := appendSystemTx(tx, e)
		return err
	})
	var de *domain.Error
	if errors.As(err, &de) {
		return domain.NotificationRecord{}, err
	}
	if err != nil {
		return domain.NotificationRecord{}, translate(err, "notification")
	}
	return row.toDomain(), nil
}

// DeskGauges counts what waits on a person in one grouped query.
func (s *outbox) DeskGauges(ctx context.Context) ([]domain.DeskGauge, time.Time, error) {
	var rows []struct {
		Namespace string
		Type      string
		State     string
		N         int
		Oldest    string
	}
	err := s.db.WithContext(ctx).Raw("SELECT namespace, type, state, COUNT(*) AS n, MIN(COALESCE(desk_entered_at, updated_at)) AS oldest" +
		" FROM operations WHERE state IN ('unknown_outcome', 'failed_terminal', 'awaiting_approval')" +
		" GROUP BY namespace, type, state ORDER BY namespace, type, state").Scan(&rows).Error
	if err != nil {
		return nil, time.Time{}, translate(err, "operation")
	}
	out := make([]domain.DeskGauge, 0, len(rows))
	for _, r := range rows {
		st, err := domain.ParseState(r.State)
		if err != nil {
			continue
		}
		g := domain.DeskGauge{Namespace: r.Namespace, Type: r.Type, State: st, Items: r.N}
		g.Oldest, _ = asTime(r.Oldest)
		out = append(out, g)
	}
	return out, s.now().UTC(), nil
}

// asTime reads an aggregate over a time column: PostgreSQL answers a time,
// SQLite the text it stores.
func asTime(v any) (time.Time, bool) {
	switch t := v.(type) {
	case time.Time:
		return t.UTC(), true
	case []byte:
		return asTime(string(t))
	case string:
		for _, layout := range []string{"2006-01-02 15:04:05.999999999-07:00", time.RFC3339Nano, "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999"} {
			if p, err := time.Parse(layout, t); err == nil {
				return p.UTC(), true
			}
		}
	}
	return time.Time{}, false
}

// OutboxBacklog counts pending notifications and finds the oldest.
func (s *outbox) OutboxBacklog(ctx context.Context) (int, time.Time, error) {
	var row struct {
		N      int
		Oldest *string
	}
	err := s.db.WithContext(ctx).Raw("SELECT COUNT(*) AS n, MIN(created_at) AS oldest FROM notifications WHERE status = 'pending'").Scan(&row).Error
	if err != nil {
		return 0, time.Time{}, translate(err, "notification")
	}
	var oldest time.Time
	if row.Oldest != nil {
		oldest, _ = asTime(*row.Oldest)
	}
	return row.N, oldest, nil
}

// UndeliveredNotifications lists failed and retrying notifications, newest
// first, each with its attempts.
func (s *outbox) UndeliveredNotifications(ctx context.Context, limit int) ([]domain.NotificationRecord, error) {
	var rows []notificationRow
	db := s.db.WithContext(ctx)
	if err := db.Where("status = 'failed' OR (status = 'pending' AND attempts > 0)").
		Order("created_at DESC, id DESC").Limit(limit).Find(&rows).Error; err != nil {
		return nil, translate(err, "notification")
	}
	return withHistory(db, rows)
}
