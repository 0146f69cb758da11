package store

import (
	"context"
	"fmt"
)

// SeedSyntheticAudit writes n synthetic audit events of plausible size, in
// one statement, for export benchmarks: three events per made-up operation
// stream, an hour apart from a day ago. Their hashes are placeholders, so
// the trail they form does not verify. The server never calls it.
func (s *trail) SeedSyntheticAudit(ctx context.Context, n int) error {
	if n <= 0 {
		return nil
	}
	cols := "id, stream, seq, operation_id, namespace, at, actor_kind, actor_name, actor_namespace, action, " +
		"from_state, to_state, reason, detail, request_id, client_addr, prev_hash, hash"
	var q string
	if s.dialect.isPostgres() {
		q = `INSERT INTO audit_events (` + cols + `)
SELECT 'ev_seed_' || g, 'op_seed_' || (g / 3), g % 3 + 1, 'op_seed_' || (g / 3), 'bench',
       clock_timestamp() - interval '1 day' + g * interval '1 millisecond', 'workflow', 'bench-workflow', 'bench',
       (ARRAY['registered', 'began', 'settled'])[g % 3 + 1], '', 'completed', '',
       '{"result":{"ref":"crm_' || g || '","data":{"id":' || g || ',"owner":"u_9"}}}',
       'req_' || g, '192.0.2.' || (g % 250), md5(g::text) || md5((g + 1)::text), md5((g + 2)::text) || md5((g + 3)::text)
FROM generate_series(0, ? - 1) AS g`
	} else {
		q = `WITH RECURSIVE g(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM g WHERE n + 1 < ?)
INSERT INTO audit_events (` + cols + `)
SELECT 'ev_seed_' || n, 'op_seed_' || (n / 3), n % 3 + 1, 'op_seed_' || (n / 3), 'bench',
       strftime('%Y-%m-%d %H:%M:%f', 'now', '-1 day', '+' || (n / 1000.0) || ' seconds') || '+00:00',
       'workflow', 'bench-workflow', 'bench', CASE n % 3 WHEN 0 THEN 'registered' WHEN 1 THEN 'began' ELSE 'settled' END,
       '', 'completed', '', '{"result":{"ref":"crm_' || n || '","data":{"id":' || n || ',"owner":"u_9"}}}',
       'req_' || n, '192.0.2.' || (n % 250), printf('%064x', n), printf('%064x', n + 1)
FROM g`
	}
	if err := s.db.WithContext(ctx).Exec(q, n).Error; err != nil {
		return translate(err, fmt.Sprintf("%d synthetic audit events", n))
	}
	return nil
}
