package store

import (
	"context"
	"database/sql"
	"time"

	"gorm.io/gorm"
)

// conn is what every part of the store works through: the database handle,
// its dialect, PostgreSQL's URL and SQLite's clock. The Store and each of
// its parts share one, so SetClock reaches them all; a part bound to a
// transaction gets a conn of its own (in). The system stream's lock and
// append are conn's as well (audit_checkpoint.go, audit_system.go):
// credentials, notifications and drills write their system events in their
// own transactions.
type conn struct {
	db      *gorm.DB
	dialect dialect
	url     string // PostgreSQL's URL, for connections of the store's own
	// now is SQLite's clock: an embedded database shares the process's clock.
	// PostgreSQL's clock is read in SQL.
	now func() time.Time
}

// in is c bound to the transaction tx.
func (c *conn) in(tx *gorm.DB) *conn {
	return &conn{db: tx, dialect: c.dialect, url: c.url, now: c.now}
}

// clock is the database's clock: PostgreSQL's, or the process's for SQLite.
func (c *conn) clock(ctx context.Context) (time.Time, error) {
	if !c.dialect.keepsClock() {
		return c.now().UTC(), nil
	}
	var now time.Time
	if err := c.db.WithContext(ctx).Raw("SELECT clock_timestamp()").Row().Scan(&now); err != nil {
		return time.Time{}, translate(err, "clock")
	}
	return now.UTC(), nil
}

// transaction runs fn in one transaction with the given options.
func (c *conn) transaction(ctx context.Context, fn func(tx *gorm.DB) error, opts ...*sql.TxOptions) error {
	return c.db.WithContext(ctx).Transaction(fn, opts...)
}

// reading runs fn in the transaction the store is bound to, or else in a
// read-only transaction of its own, which keeps the batch's statement out
// of GORM's shared statement cache (see transaction).
func (c *conn) reading(ctx context.Context, fn func(*gorm.DB) error) error {
	if _, inTx := c.db.Statement.ConnPool.(*sql.Tx); inTx {
		return fn(c.db.WithContext(ctx))
	}
	return c.transaction(ctx, fn, &sql.TxOptions{ReadOnly: true})
}
