package store

import (
	"context"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// One page of the audit trail, as the desk's audit page and GET /v1/audit
// read it. A page is found by walking an index in the page's order and
// stopping at its last row, whatever the filter:
//   - no time range: write order, on the primary key; a narrow filter
//     (actor, decision) walks its own (…, pos) index instead;
//   - a time range: time order, then write order, on (at, pos). Write
//     positions only roughly follow time, so no index in write order can
//     skip to a time: a range late in a long trail would read every row
//     before it.
// A filter by actor is one query per way of being the actor (see
// actorConds), each walking its own index, merged: the planner would
// otherwise read the OR of them in write order, the whole trail for
// someone who has done little.

// ListAudit returns one page of events oldest first (newest first with
// NewestFirst: the same indexes, walked backwards), with keyset
// pagination: on the write position, or on (time, write position) when the
// selection has a time range.
func (s *trail) ListAudit(ctx context.Context, q domain.AuditSelect) ([]domain.AuditEvent, string, error) {
	token, err := s.tokenActor(ctx, q.Actor)
	if err != nil {
		return nil, "", err
	}
	timed := !q.From.IsZero() || !q.To.IsZero()
	actor := q.Actor
	q.Actor = ""
	where, args := auditWhere(q, false)
	if q.Cursor != "" {
		cond, cargs, ok := pageCursor(q.Cursor, timed, q.NewestFirst)
		if !ok {
			return nil, "", domain.Invalid(domain.FieldError{Field: "cursor", Message: "is not a cursor this server issued"})
		}
		where, args = append(where, cond), append(args, cargs...)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 50
	}
	order := " ORDER BY pos LIMIT ?"
	switch {
	case timed && q.NewestFirst:
		order = " ORDER BY at DESC, pos DESC LIMIT ?"
	case timed:
		order = " ORDER BY at, pos LIMIT ?"
	case q.NewestFirst:
		order = " ORDER BY pos DESC LIMIT ?"
	}
	base := "SELECT * FROM audit_events WHERE " + strings.Join(where, " AND ")
	query, qargs := base+order, append(args, limit+1)
	if actor != "" {
		var branches []string
		qargs = nil
		for i, c := range actorConds(token) {
			branches = append(branches, "SELECT * FROM ("+base+" AND "+c+order+") AS b"+strconv.Itoa(i))
			qargs = append(append(append(qargs, args...), actor), limit+1)
		}
		query, qargs = "SELECT * FROM ("+strings.Join(branches, " UNION ")+") AS e"+order, append(qargs, limit+1)
	}
	var rows []auditRow
	if err := s.db.WithContext(ctx).Raw(query, qargs...).Scan(&rows).Error; err != nil {
		return nil, "", translate(err, "audit event")
	}
	next := ""
	if len(rows) > limit {
		rows = rows[:limit]
		last := rows[limit-1]
		c := "a" + strconv.FormatInt(last.Pos, 10)
		if timed {
			c = "t" + strconv.FormatInt(last.At.UnixNano(), 10) + "." + strconv.FormatInt(last.Pos, 10)
		}
		if q.NewestFirst {
			c = strings.ToUpper(c[:1]) + c[1:]
		}
		next = base64.RawURLEncoding.EncodeToString([]byte(c))
	}
	out := make([]domain.AuditEvent, len(rows))
	for i, r := range rows {
		out[i] = r.toDomain()
	}
	return out, next, nil
}

// pageCursor reads a cursor ListAudit issued: "a" and a write position for
// a page in write order, "t", a time and a write position for one in time
// order; upper case ("A", "T") for the same orders newest first. A cursor
// of another order is refused.
func pageCursor(cursor string, timed, newest bool) (string, []any, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(raw) < 2 {
		return "", nil, false
	}
	after := ">"
	if newest {
		if raw[0] != 'A' && raw[0] != 'T' {
			return "", nil, false
		}
		raw[0], after = raw[0]+'a'-'A', "<"
	} else if raw[0] == 'A' || raw[0] == 'T' {
		return "", nil, false
	}
	switch {
	case raw[0] == 'a' && !timed:
		pos, err := strconv.ParseInt(string(raw[1:]), 10, 64)
		return "pos " + after + " ?", []any{pos}, err == nil
	case raw[0] == 't' && timed:
		ns, p, ok := strings.Cut(string(raw[1:]), ".")
		at, err1 := strconv.ParseInt(ns, 10, 64)
		pos, err2 := strconv.ParseInt(p, 10, 64)
		if !ok || err1 != nil || err2 != nil {
			return "", nil, false
		}
		t := time.Unix(0, at).UTC()
		return "(at, pos) " + after + " (?, ?)", []any{t, pos}, true
	}
	return "", nil, false
}

// tokenActor reports whether name is an API token's: a workflow actor is
// always one (auth gives a token's name to its actor), and tokens are
// revoked, never deleted.
func (s *trail) tokenActor(ctx context.Context, name string) (bool, error) {
	if name == "" {
		return false, nil
	}
	var n int64
	if err := s.db.WithContext(ctx).Raw("SELECT COUNT(*) FROM api_tokens WHERE name = ?", name).Scan(&n).Error; err != nil {
		return false, translate(err, "token")
	}
	return n > 0, nil
}
