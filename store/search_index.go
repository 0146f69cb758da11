package store

import (
	"context"
)

// indexSearchSQL is one batch of the search indexer (migration 00028), one
// statement, so one snapshot and one transaction:
//
//   - taken: up to $1 rows of the queue no other indexer holds (FOR UPDATE
//     SKIP LOCKED), deleted — only those, so a change queued meanwhile
//     stays for the next batch. If the transaction fails they stay too.
//   - gone: the text of an operation deleted since it was queued.
//   - stamped: the stamp of each operation's state, raised where it is
//     smaller (a later state of an operation has a larger one: twice its
//     version, plus one when its content is empty — a purge empties it
//     without a new version). Another indexer may hold the same operation
//     (it was queued twice); the stamp's row lock orders the two, and the
//     one that read the older state raises nothing. Rows are written in ID
//     order, so two batches lock them in one order.
//   - part0, part1: the key and content, and the error's message and code,
//     of the operations whose stamp this batch raised, each written only
//     when its text changed (a settle that sets an error leaves part 0 as
//     it is); part 1 is deleted when the error has neither.
//
// A row of the queue is visible only once the write that queued it has
// committed, so the state read here is at least that write's.
const indexSearchSQL = `WITH taken AS (
	DELETE FROM operation_search_queue q
	 WHERE q.ctid = ANY (ARRAY(SELECT ctid FROM operation_search_queue LIMIT ? FOR UPDATE SKIP LOCKED))
	RETURNING q.operation_id
), ids AS (
	SELECT DISTINCT operation_id FROM taken
), gone AS (
	DELETE FROM operation_search s USING ids
	 WHERE s.operation_id = ids.operation_id AND NOT EXISTS (SELECT 1 FROM operations o WHERE o.id = ids.operation_id)
), gonestamp AS (
	DELETE FROM operation_search_stamp s USING ids
	 WHERE s.operation_id = ids.operation_id AND NOT EXISTS (SELECT 1 FROM operations o WHERE o.id = ids.operation_id)
), stamped AS (
	INSERT INTO operation_search_stamp AS s (operation_id, stamp)
	SELECT o.id, 2 * o.version + (o.content = '')::int
	  FROM operations o JOIN ids ON o.id = ids.operation_id
	 ORDER BY o.id
	ON CONFLICT (operation_id) DO UPDATE SET stamp = EXCLUDED.stamp WHERE s.stamp < EXCLUDED.stamp
	RETURNING s.operation_id
), searched AS (
	SELECT o.id, lower(o.key || E'\n' || o.content) AS registered,
	       lower(COALESCE(o.last_error_message, '') || E'\n' || COALESCE(o.last_error_code, '')) AS outcome,
	       COALESCE(o.last_error_message, '') <> '' OR COALESCE(o.last_error_code, '') <> '' AS failed
	  FROM operations o JOIN stamped ON o.id = stamped.operation_id
), part0 AS (
	INSERT INTO operation_search AS s (operation_id, part, body)
	SELECT id, 0, registered FROM searched ORDER BY id
	ON CONFLICT (operation_id, part) DO UPDATE SET body = EXCLUDED.body WHERE s.body <> EXCLUDED.body
), part1 AS (
	INSERT INTO operation_search AS s (operation_id, part, body)
	SELECT id, 1, outcome FROM searched WHERE failed ORDER BY id
	ON CONFLICT (operation_id, part) DO UPDATE SET body = EXCLUDED.body WHERE s.body <> EXCLUDED.body
), part1gone AS (
	DELETE FROM operation_search s USING searched WHERE s.operation_id = searched.id AND s.part = 1 AND NOT searched.failed
)
SELECT COUNT(*) FROM taken`

// IndexSearch writes the Operations page's search text (migration
// 00028's side table) of the operations changed since it was last
// written: one batch of at most limit changes, taken from the queue the
// operations' trigger fills. It returns how many changes it took; fewer
// than limit means the queue was empty when it looked. Every replica may
// run it at once.
//
// On SQLite the search reads operations itself (list.go) and there is
// nothing to write: it returns 0.
func (s *Store) IndexSearch(ctx context.Context, limit int) (int, error) {
	if !s.dialect.searchSide() {
		return 0, nil
	}
	var n int
	if err := s.db.WithContext(ctx).Raw(indexSearchSQL, limit).Row().Scan(&n); err != nil {
		return 0, translate(err, "search text")
	}
	return n, nil
}
