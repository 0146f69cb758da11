package store

import (
	"context"

	"github.com/opshandoff/handoff/domain"
)

// CreateTogether commits the new operations' changes as one group-commit
// flush, as if they had arrived at once, and returns each one's answer:
// whether it was created, or its error.
func CreateTogether(s *Store, chs []domain.Change) ([]bool, []error) {
	batch := make([]*gcRequest, len(chs))
	for i, ch := range chs {
		batch[i] = &gcRequest{ch: ch, create: true, done: make(chan gcResult, 1)}
	}
	s.gc.flush(batch)
	created, errs := make([]bool, len(chs)), make([]error, len(chs))
	for i, r := range batch {
		res := <-r.done
		created[i], errs[i] = res.n == 1, res.err
	}
	return created, errs
}

// FastPath reports whether the store writes ch in one statement.
func FastPath(s *Store, ch domain.Change) bool { return s.pool != nil && fastPathEligible(ch) }

// MigrateTo migrates s's database up to version v only.
func MigrateTo(ctx context.Context, s *Store, v int64) error {
	p, err := s.provider(true)
	if err != nil {
		return err
	}
	_, err = p.UpTo(ctx, v)
	return err
}

// Exec runs a statement on s's database, for tests that set up rows an
// older schema holds.
func Exec(ctx context.Context, s *Store, sql string, args ...any) error {
	return s.db.WithContext(ctx).Exec(sql, args...).Error
}
