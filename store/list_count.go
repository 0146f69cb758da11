package store

import (
	"context"

	"github.com/opshandoff/handoff/domain"
	"gorm.io/gorm"
)

// DeskCount implements domain.DeskStore: how many operations List would
// give for q over all its pages (the cursor and limit are ignored), so a
// list can say how many it holds. On PostgreSQL a search is planned for
// its own values, as DeskList's.
func (s *Store) DeskCount(ctx context.Context, q domain.ListQuery) (int, error) {
	q.Cursor = ""
	where, args, err := s.listWhere(q)
	if err != nil {
		return 0, err
	}
	var n int64
	count := func(db *gorm.DB) error {
		return db.Raw("SELECT COUNT(*) FROM operations WHERE "+where, args...).Scan(&n).Error
	}
	if s.dialect != "postgres" || q.Text == "" {
		err = count(s.db.WithContext(ctx))
	} else {
		err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			if err := tx.Exec("SET LOCAL plan_cache_mode = force_custom_plan").Error; err != nil {
				return err
			}
			return count(tx)
		})
	}
	if err != nil {
		return 0, translate(err, "operation")
	}
	return int(n), nil
}
