package store

import (
	"context"
	"database/sql"

	"gorm.io/gorm"
)

// indexSearchSQL is one batch of the search indexer (migrations 00028 and
// 00030), one statement, so one snapshot and one transaction. It runs only
// in the transaction that holds the indexer's turn (IndexSearch), so no
// other batch writes the side table meanwhile:
//
//   - taken: up to $1 rows of the queue, deleted — only those, so a change
//     queued meanwhile stays for the next batch. If the transaction fails
//     they stay too. No row lock first: no other batch deletes them.
//   - gone: the text of an operation deleted since it was queued.
//   - searched: the text of each operation still there, as this snapshot
//     has it, which is at least the state of the write that queued it (a
//     row of the queue is visible only once that write has committed) and
//     of every state an earlier batch wrote (that batch committed before
//     this one's turn began, and this statement started after it).
//   - part0, part1: the key and content, and the error's message and code,
//     each inserted where the operation has no row yet and updated only
//     where its text changed (a settle that sets an error leaves part 0 as
//     it is); part 1 is deleted when the error has neither.
const indexSearchSQL = `WITH taken AS (
	DELETE FROM operation_search_queue q
	 WHERE q.ctid = ANY (ARRAY(SELECT ctid FROM operation_search_queue LIMIT ?))
	RETURNING q.operation_id
), ids AS (
	SELECT DISTINCT operation_id FROM taken
), gone AS (
	DELETE FROM operation_search s USING ids
	 WHERE s.operation_id = ids.operation_id AND NOT EXISTS (SELECT 1 FROM operations o WHERE o.id = ids.operation_id)
), searched AS (
	SELECT o.id, lower(o.key || E'\n' || o.content) AS registered,
	       lower(COALESCE(o.last_error_message, '') || E'\n' || COALESCE(o.last_error_code, '')) AS outcome,
	       COALESCE(o.last_error_message, '') <> '' OR COALESCE(o.last_error_code, '') <> '' AS failed,
	       EXISTS (SELECT 1 FROM operation_search s WHERE s.operation_id = o.id AND s.part = 0) AS has0,
	       EXISTS (SELECT 1 FROM operation_search s WHERE s.operation_id = o.id AND s.part = 1) AS has1
	  FROM operations o JOIN ids ON o.id = ids.operation_id
), part0 AS (
	INSERT INTO operation_search (operation_id, part, body)
	SELECT id, 0, registered FROM searched WHERE NOT has0 ORDER BY id
), part0changed AS (
	UPDATE operation_search s SET body = searched.registered FROM searched
	 WHERE searched.has0 AND s.operation_id = searched.id AND s.part = 0 AND s.body <> searched.registered
), part1 AS (
	INSERT INTO operation_search (operation_id, part, body)
	SELECT id, 1, outcome FROM searched WHERE failed AND NOT has1 ORDER BY id
), part1changed AS (
	UPDATE operation_search s SET body = searched.outcome FROM searched
	 WHERE searched.failed AND searched.has1 AND s.operation_id = searched.id AND s.part = 1 AND s.body <> searched.outcome
), part1gone AS (
	DELETE FROM operation_search s USING searched WHERE searched.has1 AND NOT searched.failed
	   AND s.operation_id = searched.id AND s.part = 1
)
SELECT COUNT(*) FROM taken`

// searchTurn names the search indexer's turn (an advisory lock).
const searchTurn = "handoff.search:"

// IndexSearch writes the Operations page's search text (migration
// 00028's side table) of the operations changed since it was last
// written: one batch of at most limit changes, taken from the queue the
// operations' trigger fills. It returns how many changes it took; fewer
// than limit means the queue was empty when it looked, or that another
// indexer is at work (it then takes nothing), which works the queue off
// itself. Every replica may run it at once.
//
// The batches take turns: each first takes the indexer's turn, a
// transaction-scoped advisory lock, without waiting, and reads in a
// statement of its own after that, so its snapshot is newer than every
// earlier batch's commit and an older state never overwrites a newer one
// (migration 00030). The transaction is READ COMMITTED whatever the
// server's default, so that the batch's statement takes a snapshot of its
// own.
//
// On SQLite the search reads operations itself (list.go) and there is
// nothing to write: it returns 0.
func (s *Store) IndexSearch(ctx context.Context, limit int) (int, error) {
	return s.indexSearch(ctx, limit, false)
}

// indexSearch is IndexSearch; with wait it waits for the turn instead of
// leaving the batch to whoever holds it.
func (s *Store) indexSearch(ctx context.Context, limit int, wait bool) (int, error) {
	if !s.dialect.searchSide() {
		return 0, nil
	}
	var n int
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		if wait {
			if err := s.dialect.lock(tx, searchTurn); err != nil {
				return err
			}
		} else if ok, err := s.dialect.tryLock(tx, searchTurn); err != nil || !ok {
			return err
		}
		return tx.Raw(indexSearchSQL, limit).Row().Scan(&n)
	}, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return 0, translate(err, "search text")
	}
	return n, nil
}
