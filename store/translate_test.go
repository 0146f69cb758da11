package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/opshandoff/handoff/domain"
)

// TestTranslate_ConnectionLost: every way a driver says the connection is
// gone — a bad connection, PostgreSQL shutting the backend down, a
// connection exception, a pool that could not hand out a connection in
// time, a write that reached a standby during failover — is unavailable
// (503 with Retry-After), never internal (500).
func TestTranslate_ConnectionLost(t *testing.T) {
	lost := []error{
		driver.ErrBadConn,
		fmt.Errorf("begin: %w", driver.ErrBadConn),
		sql.ErrConnDone,
		&pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"},
		&pgconn.PgError{Code: "57P02", Message: "terminating connection due to crash of another server process"},
		&pgconn.PgError{Code: "57P03", Message: "the database system is starting up"},
		&pgconn.PgError{Code: "08006", Message: "connection failure"},
		&pgconn.PgError{Code: "08003", Message: "connection does not exist"},
		&pgconn.PgError{Code: "25006", Message: "cannot execute INSERT in a read-only transaction"},
		fmt.Errorf("query: %w", io.ErrUnexpectedEOF),
		&net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)},
		fmt.Errorf("acquiring a connection: %w", context.DeadlineExceeded),
		errors.New("failed to acquire connection: timeout"),
		errors.New("conn closed"),
	}
	for _, err := range lost {
		got := translate(err, "operation")
		if domain.ErrorCode(got) != domain.EUnavailable {
			t.Errorf("translate(%v) = %v (%s), want unavailable", err, got, domain.ErrorCode(got))
		}
	}
	// Errors that are the statement's own fault stay what they are.
	if c := domain.ErrorCode(translate(&pgconn.PgError{Code: "22P02"}, "operation")); c != domain.EInternal {
		t.Errorf("a data exception became %s", c)
	}
	if c := domain.ErrorCode(translate(sql.ErrNoRows, "operation")); c != domain.ENotFound {
		t.Errorf("no rows became %s", c)
	}
}
