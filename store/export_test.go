package store

import (
	"strings"

	"github.com/opshandoff/handoff/domain"
	"gorm.io/gorm"
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

// ExplainList is PostgreSQL's plan for List's query for q, planned for its
// values, with the settings (such as "enable_seqscan = off") in force.
func ExplainList(s *Store, q domain.ListQuery, settings ...string) (string, error) {
	sql, args, _, err := s.listSQL(q)
	if err != nil {
		return "", err
	}
	var plan []string
	err = s.db.Transaction(func(tx *gorm.DB) error {
		for _, set := range append([]string{"plan_cache_mode = force_custom_plan"}, settings...) {
			if err := tx.Exec("SET LOCAL " + set).Error; err != nil {
				return err
			}
		}
		return tx.Raw("EXPLAIN "+sql, args...).Scan(&plan).Error
	})
	return strings.Join(plan, "\n"), err
}
