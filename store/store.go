// Package store implements domain.Store and domain.TokenStore with GORM on
// PostgreSQL (production) and SQLite (the embedded default). It owns every
// SQL statement: rows and their converters, compare-and-set updates, keyset
// queries and search, and the translation of database errors into
// domain.Error at its border.
package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"runtime"
	"strings"
	"time"

	"github.com/glebarez/sqlite"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/migrations"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// Store is the GORM implementation of domain.Store and the rest of
// domain.LedgerStore. Its own methods read and write operations — the
// lifecycle through the group commit, loads and claims, the desk's lists,
// search, overview and incidents — over the pools below; the parts it
// embeds keep what needs only the database handle (conn): credentials, the
// desk's people, the audit trail, notifications, drills and lookups. Each
// part implements its domain interfaces alone.
type Store struct {
	*conn
	// pool is PostgreSQL's pgx pool for the single-statement write path
	// (fastpath.go); nil on SQLite and in stores bound to a transaction.
	pool    *pgxpool.Pool
	commits *committer // group commit of the single statements (groupcommit.go)
	// leases is PostgreSQL's record of the leased operations this replica
	// last wrote (leasecache.go); nil elsewhere.
	leases *leaseCache

	credentials // session.go, token.go, server_key.go
	deskPeople  // people.go, saved_view.go
	trail       // audit*.go
	outbox      // notification.go
	drills      // drill.go
	lookups     // lookup.go
}

// newStore is a store over c with every part sharing it.
func newStore(c *conn) *Store {
	return &Store{conn: c,
		credentials: credentials{c}, deskPeople: deskPeople{c}, trail: trail{c},
		outbox: outbox{c}, drills: drills{c}, lookups: lookups{c}}
}

var (
	_ domain.LedgerStore  = (*Store)(nil)
	_ domain.Store        = (*Store)(nil)
	_ domain.TokenStore   = (*Store)(nil)
	_ domain.LeaseCache   = (*Store)(nil)
	_ domain.ContentStore = (*Store)(nil)
)

// Open connects to the database named by url — "postgres://…" or
// "sqlite://path" (also "sqlite:path") — and migrates it.
func Open(ctx context.Context, rawURL string, opts ...Option) (*Store, error) {
	s, err := Connect(rawURL, opts...)
	if err != nil {
		return nil, err
	}
	if err := s.Migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Connect opens the database without migrating it.
func Connect(rawURL string, opts ...Option) (*Store, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	// No PrepareStmt: GORM's shared statement cache can deadlock when a
	// goroutine preparing outside a transaction waits for a pooled
	// connection that a transaction waiting on the cache holds. pgx already
	// prepares and caches statements per connection.
	cfg := &gorm.Config{SkipDefaultTransaction: true, TranslateError: true,
		Logger: logger.Discard, NowFunc: func() time.Time { return time.Now().UTC() }}
	switch {
	case strings.HasPrefix(rawURL, "postgres://"), strings.HasPrefix(rawURL, "postgresql://"):
		db, err := gorm.Open(postgres.Open(rawURL), cfg)
		if err != nil {
			return nil, domain.Wrap(domain.EUnavailable, err, "cannot reach PostgreSQL")
		}
		sqlDB, _ := db.DB()
		// Commits are the cost on PostgreSQL: size the pool for the cores,
		// not for the clients.
		sqlDB.SetMaxOpenConns(4 * runtime.GOMAXPROCS(0))
		sqlDB.SetMaxIdleConns(4 * runtime.GOMAXPROCS(0))
		sqlDB.SetConnMaxIdleTime(5 * time.Minute)
		// The pgx pool serves the hot path's loads and the group commit's
		// writers (groupcommit.go), each a connection while it flushes.
		writers := o.writerCount()
		pool, err := openPool(rawURL, int32(4*runtime.GOMAXPROCS(0)+writers))
		if err != nil {
			sqlDB.Close()
			return nil, domain.Wrap(domain.EUnavailable, err, "cannot reach PostgreSQL")
		}
		s := newStore(&conn{db: db, dialect: dialectPostgres, url: rawURL, now: time.Now})
		s.pool, s.commits, s.leases = pool, newCommitter(pool, o), newLeaseCache()
		return s, nil
	case strings.HasPrefix(rawURL, "sqlite:"):
		path := strings.TrimPrefix(strings.TrimPrefix(rawURL, "sqlite:"), "//")
		if path == "" {
			return nil, domain.Errorf(domain.EInvalid, "sqlite URL names no file: %q", rawURL)
		}
		exposed, err := prepareSQLiteFiles(path)
		if err != nil {
			return nil, domain.Wrap(domain.EUnavailable, err, "cannot create the SQLite database file")
		}
		warnExposed(exposed)
		q := url.Values{}
		q.Add("_pragma", "busy_timeout(10000)")
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(NORMAL)")
		q.Add("_pragma", "foreign_keys(1)")
		q.Set("_txlock", "immediate")
		db, err := gorm.Open(sqlite.Open("file:"+path+"?"+q.Encode()), cfg)
		if err != nil {
			return nil, domain.Wrap(domain.EUnavailable, err, "cannot open the SQLite database")
		}
		sqlDB, _ := db.DB()
		// SQLite has one writer; one connection serialises writers without
		// busy errors, and reads are fast enough for one process.
		sqlDB.SetMaxOpenConns(1)
		return newStore(&conn{db: db, dialect: dialectSQLite, now: time.Now}), nil
	}
	return nil, domain.Errorf(domain.EInvalid, "HANDOFF_DATABASE_URL must start with postgres:// or sqlite://")
}

// Dialect is "postgres" or "sqlite".
func (s *Store) Dialect() string { return string(s.dialect) }

// GroupCommit is what the group commit (groupcommit.go) did since the
// store opened; ok is false on SQLite, which writes without one.
func (s *Store) GroupCommit() (stats GroupCommitStats, ok bool) {
	if s.commits == nil {
		return GroupCommitStats{}, false
	}
	return s.commits.stats(), true
}

// Close closes the connection pool.
func (s *Store) Close() error {
	if s.pool != nil {
		s.commits.close()
		s.pool.Close()
	}
	sqlDB, err := s.db.DB()
	if err != nil {
		return err
	}
	return sqlDB.Close()
}

// SetClock replaces SQLite's clock, for tests that move time. PostgreSQL
// always uses its own clock.
func (s *Store) SetClock(now func() time.Time) { s.now = now }

// provider is goose over the store's database; migrating takes a session
// lock so that replicas started together migrate one at a time.
func (s *Store) provider(migrating bool) (*goose.Provider, error) {
	fsys, err := migrations.For(string(s.dialect))
	if err != nil {
		return nil, err
	}
	sqlDB, err := s.db.DB()
	if err != nil {
		return nil, err
	}
	var opts []goose.ProviderOption
	if !s.dialect.writersTakeTurns() && migrating {
		// Several replicas may start at once: one migrates, the others wait,
		// polling every second rather than goose's five (up to 5 minutes).
		// The lock is keyed by schema, like the store's advisory locks, so
		// Handoffs in other schemas of the database do not wait on it.
		var id int64
		if err := s.db.Raw("SELECT hashtext('handoff.migrate:' || current_schema())::bigint").Scan(&id).Error; err != nil {
			return nil, translate(err, "migration lock")
		}
		locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(id), lock.WithLockTimeout(1, 300))
		if err != nil {
			return nil, err
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	return goose.NewProvider(s.dialect.gooseDialect(), sqlDB, fsys, opts...)
}

// Migrate applies every pending migration.
func (s *Store) Migrate(ctx context.Context) error {
	p, err := s.provider(true)
	if err != nil {
		return err
	}
	// Nothing pending: do not take the migration lock. On PostgreSQL it is
	// a session advisory lock, which PgBouncer in transaction mode cannot
	// carry; replicas behind it start without it once `handoff migrate` has
	// run on a direct connection.
	if pending, err := p.HasPending(ctx); err == nil && !pending {
		return nil
	}
	results, err := p.Up(ctx)
	if err != nil {
		return domain.Wrap(domain.EUnavailable, err, "migrating the database failed")
	}
	for _, r := range results {
		slog.Info("migrated", "version", r.Source.Version, "file", r.Source.Path, "took", r.Duration)
	}
	if len(results) > 0 && s.dialect.isPostgres() {
		// Fresh statistics for the planner: new indexes and tables have
		// none until autovacuum comes round.
		if err := s.db.WithContext(ctx).Exec("ANALYZE operations, operation_search, attempts, content_versions, audit_events, api_tokens").Error; err != nil {
			return domain.Wrap(domain.EUnavailable, err, "analyzing the migrated tables failed")
		}
	}
	return nil
}

// Ping checks that the database answers and has no pending migration.
func (s *Store) Ping(ctx context.Context) error {
	p, err := s.provider(false)
	if err != nil {
		return err
	}
	pending, err := p.HasPending(ctx)
	if err != nil {
		return domain.Wrap(domain.EUnavailable, err, "the database does not answer")
	}
	if pending {
		return domain.Errorf(domain.EUnavailable, "the database has pending migrations")
	}
	return nil
}

// translate turns database errors into domain errors at the border.
func translate(err error, what string) error {
	var de *domain.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &de):
		return err
	case errors.Is(err, gorm.ErrRecordNotFound), errors.Is(err, sql.ErrNoRows):
		return domain.Errorf(domain.ENotFound, "no such %s", what)
	case errors.Is(err, gorm.ErrDuplicatedKey):
		return domain.Wrap(domain.EConflict, err, what+" already exists")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return domain.Wrap(domain.EUnavailable, err, "the request was cancelled")
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (pgErr.Code == "40001" || pgErr.Code == "40P01") {
		return domain.Wrap(domain.EConflict, err, "serialization failure")
	}
	if errors.As(err, &pgErr) && (pgErr.Code == "22021" || pgErr.Code == "22P05") {
		// The domain refuses such text before it gets here; should any slip
		// through, it is the request's fault, not the server's.
		return domain.Wrap(domain.EInvalid, err, "the text holds NUL or invalid UTF-8, which cannot be stored")
	}
	if errors.As(err, &pgErr) && pgErr.Code == "23505" { // what GORM's TranslateError does on its path
		return domain.Wrap(domain.EConflict, err, what+" already exists")
	}
	if isConnError(err) {
		return domain.Wrap(domain.EUnavailable, err, "the database cannot be reached")
	}
	return domain.Wrap(domain.EInternal, err, fmt.Sprintf("database error on %s", what))
}

// isConnError reports whether err means the database connection was lost
// or could not be had, or reached a server that takes no writes now (a
// standby not yet promoted, behind an address that moves at failover): the
// request may succeed once the database is back, so it is 503 with
// Retry-After, never 500. This is the one place that knows the drivers'
// ways of saying so; every store path translates through it.
func isConnError(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// 08: connection exception; 57P01/02/03: admin shutdown, crash
		// shutdown, cannot connect now; 53300: too many connections;
		// 25006: read-only SQL transaction ("cannot execute … in a
		// read-only transaction").
		return strings.HasPrefix(pgErr.Code, "08") || strings.HasPrefix(pgErr.Code, "57P") || pgErr.Code == "53300" ||
			pgErr.Code == "25006"
	}
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) || errors.Is(err, sql.ErrConnDone) || errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) ||
		pgconn.Timeout(err) || pgconn.SafeToRetry(err) {
		return true
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return true
	}
	msg := err.Error()
	for _, s := range connErrorTexts {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// connErrorTexts are the connection failures drivers report only as text.
var connErrorTexts = []string{
	"connection refused", "connection reset", "database is closed", "database is locked", "broken pipe",
	"closed pool", "conn closed", "bad connection", "unexpected EOF", "failed to acquire connection",
	"timeout: context", "the database system is shutting down", "the database system is starting up",
	"terminating connection",
}
