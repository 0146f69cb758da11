package store

import (
	"database/sql"
	"time"

	"github.com/pressly/goose/v3"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// dialect is the database a store speaks, chosen once when it opens
// (Open). Where PostgreSQL and SQLite differ — in the SQL, or in what the
// database does for the store — the store asks its dialect; this file is
// the one place that tells the two apart.
type dialect string

const (
	dialectPostgres dialect = "postgres"
	dialectSQLite   dialect = "sqlite"
)

// dialectOf is the dialect of a transaction's database, for the writes
// that get a transaction rather than the store (writeTx).
func dialectOf(tx *gorm.DB) dialect {
	if tx.Dialector.Name() == "postgres" {
		return dialectPostgres
	}
	return dialectSQLite
}

// isPostgres: the code paths PostgreSQL alone has (its search side table,
// its audit purge function, a seed in its own SQL).
func (d dialect) isPostgres() bool { return d == dialectPostgres }

// gooseDialect is the migrations' dialect.
func (d dialect) gooseDialect() goose.Dialect {
	if d.isPostgres() {
		return goose.DialectPostgres
	}
	return goose.DialectSQLite3
}

// forUpdate is the row lock a read for a later write takes: FOR UPDATE on
// PostgreSQL; SQLite's transaction holds the write lock already.
func (d dialect) forUpdate() string {
	if d.isPostgres() {
		return " FOR UPDATE"
	}
	return ""
}

// skipLocked is the lock of a read that takes rows to work on: the rows
// another transaction took are skipped, not waited for. SQLite has one
// writer at a time, so none.
func (d dialect) skipLocked() string {
	if d.isPostgres() {
		return " FOR UPDATE SKIP LOCKED"
	}
	return ""
}

// skipLockedOf is skipLocked for a read that joins tables: only the rows
// of the table named by alias are locked.
func (d dialect) skipLockedOf(alias string) string {
	if d.isPostgres() {
		return " FOR UPDATE OF " + alias + " SKIP LOCKED"
	}
	return ""
}

// lockRows is forUpdate for a GORM query.
func (d dialect) lockRows(q *gorm.DB) *gorm.DB {
	if d.isPostgres() {
		return q.Clauses(clause.Locking{Strength: "UPDATE"})
	}
	return q
}

// clockSQL is the database's clock in a select list: clock_timestamp(),
// or NULL where the server's clock is the store's (keepsClock).
func (d dialect) clockSQL() string {
	if d.isPostgres() {
		return "clock_timestamp()"
	}
	return "NULL"
}

// keepsClock: the database's clock is the store's (PostgreSQL, shared by
// every replica); on SQLite it is the server's.
func (d dialect) keepsClock() bool { return d.isPostgres() }

// nowSQL is the current time in a condition, and its arguments: now() by
// the database's clock, or the server's time now as a parameter.
func (d dialect) nowSQL(now time.Time) (string, []any) {
	if d.keepsClock() {
		return "now()", nil
	}
	return "?", []any{now}
}

// writersTakeTurns: one write transaction at a time (SQLite), so what
// PostgreSQL's concurrent writers need a lock, a turn or a snapshot for
// holds already.
func (d dialect) writersTakeTurns() bool { return !d.isPostgres() }

// lock takes the transaction-scoped advisory lock named name within the
// schema, followed by the values of more (parameters appended to the
// name); where writers take turns, the transaction is the lock.
func (d dialect) lock(tx *gorm.DB, name string, more ...any) error {
	if d.writersTakeTurns() {
		return nil
	}
	return tx.Exec("SELECT pg_advisory_xact_lock("+lockKey(name, len(more))+")", more...).Error
}

// tryLock is lock without waiting: false when another holds it.
func (d dialect) tryLock(tx *gorm.DB, name string) (bool, error) {
	if d.writersTakeTurns() {
		return true, nil
	}
	var ok bool
	err := tx.Raw("SELECT pg_try_advisory_xact_lock(" + lockKey(name, 0) + ")").Scan(&ok).Error
	return ok, err
}

// lockKey is an advisory lock's key: the name within the schema, then n
// parameters.
func lockKey(name string, n int) string {
	key := "hashtext('" + name + "' || current_schema()"
	for range n {
		key += " || ?"
	}
	return key + ")"
}

// snapshotIsolation is the isolation of a read that must see one
// snapshot throughout: REPEATABLE READ on PostgreSQL; on SQLite a
// deferred transaction's first read fixes a WAL snapshot already.
func (d dialect) snapshotIsolation() sql.IsolationLevel {
	if d.isPostgres() {
		return sql.LevelRepeatableRead
	}
	return sql.LevelDefault
}

// searchSide: a text search may read the search's side table,
// operation_search (PostgreSQL's, migration 00012).
func (d dialect) searchSide() bool { return d.isPostgres() }

// notifies: the database carries notifications between replicas
// (PostgreSQL's LISTEN and NOTIFY).
func (d dialect) notifies() bool { return d.isPostgres() }

// timeBucket is the SQL of the number of whole periods of secs seconds
// (an SQL number) from the time parameter to the column's time.
func (d dialect) timeBucket(col, secs string) string {
	if d.isPostgres() {
		return "CAST(FLOOR(EXTRACT(EPOCH FROM (" + col + " - CAST(? AS timestamptz))) / " + secs + ") AS bigint)"
	}
	return "CAST((julianday(" + col + ") - julianday(?)) * 86400 / " + secs + " AS INTEGER)"
}
