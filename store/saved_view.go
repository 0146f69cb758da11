package store

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/opshandoff/handoff/domain"
	"gorm.io/gorm"
)

var _ domain.SavedViewStore = (*deskPeople)(nil)

// savedViewRow is one saved view (migration 00020).
type savedViewRow struct {
	ID           string `gorm:"primaryKey"`
	OwnerIssuer  string
	OwnerSubject string
	OwnerEmail   string
	OwnerName    string
	Page         string
	Name         string
	NameKey      string // the name lowercased: unique per owner and page
	Filter       string // a JSON object of the page's filter fields
	Shared       bool
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

func (savedViewRow) TableName() string { return "saved_views" }

// nameKey is what a view's name is unique as: lowercased here, the same on
// both databases (SQLite's lower() folds ASCII only).
func nameKey(name string) string { return strings.ToLower(name) }

func toSavedViewRow(v domain.SavedView) (savedViewRow, error) {
	f, err := json.Marshal(v.Filter)
	if err != nil {
		return savedViewRow{}, domain.Wrap(domain.EInternal, err, "unwritable saved view")
	}
	if v.Filter == nil {
		f = []byte("{}")
	}
	return savedViewRow{ID: v.ID, OwnerIssuer: v.Owner.Issuer, OwnerSubject: v.Owner.Subject, OwnerEmail: v.Owner.Email,
		OwnerName: v.Owner.Name, Page: v.Page, Name: v.Name, NameKey: nameKey(v.Name), Filter: string(f), Shared: v.Shared,
		CreatedAt: v.CreatedAt.UTC(), UpdatedAt: v.UpdatedAt.UTC()}, nil
}

func (r savedViewRow) toDomain() (domain.SavedView, error) {
	v := domain.SavedView{ID: r.ID, Owner: domain.Actor{Kind: domain.ActorPerson, Issuer: r.OwnerIssuer, Subject: r.OwnerSubject,
		Email: r.OwnerEmail, Name: r.OwnerName}, Page: r.Page, Name: r.Name, Shared: r.Shared,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
	if err := json.Unmarshal([]byte(r.Filter), &v.Filter); err != nil {
		return v, domain.Wrap(domain.EInternal, err, "unreadable saved view row")
	}
	return v, nil
}

// CreateView implements domain.SavedViewStore. The count and the insert
// are one transaction; on PostgreSQL a lock per person keeps two saves at
// once from both passing the count.
func (s *deskPeople) CreateView(ctx context.Context, v domain.SavedView, max int) error {
	row, err := toSavedViewRow(v)
	if err != nil {
		return err
	}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := s.dialect.lock(tx, "handoff.views:", row.OwnerIssuer+"\x1f"+row.OwnerSubject); err != nil {
			return err
		}
		var n int64
		if err := tx.Model(&savedViewRow{}).Where("owner_issuer = ? AND owner_subject = ?", row.OwnerIssuer, row.OwnerSubject).
			Count(&n).Error; err != nil {
			return err
		}
		if n >= int64(max) {
			return domain.Invalid(domain.FieldError{Field: "name", Message: "you keep the most saved views there may be; delete one first"})
		}
		return tx.Create(&row).Error
	})
	return translate(err, "saved view")
}

// SavedView implements domain.SavedViewStore.
func (s *deskPeople) SavedView(ctx context.Context, id string) (domain.SavedView, error) {
	var rows []savedViewRow
	if err := s.db.WithContext(ctx).Where("id = ?", id).Limit(1).Find(&rows).Error; err != nil {
		return domain.SavedView{}, translate(err, "saved view")
	}
	if len(rows) == 0 {
		return domain.SavedView{}, domain.Errorf(domain.ENotFound, "no such saved view")
	}
	return rows[0].toDomain()
}

// maxListedViews bounds one page's list: a person's own (at most
// domain.MaxViewsPerPerson) and the team's shared ones.
const maxListedViews = 1000

// SavedViews implements domain.SavedViewStore.
func (s *deskPeople) SavedViews(ctx context.Context, page string, owner domain.Actor) ([]domain.SavedView, error) {
	var rows []savedViewRow
	err := s.db.WithContext(ctx).
		Where("page = ? AND ((owner_issuer = ? AND owner_subject = ?) OR shared)", page, owner.Issuer, owner.Subject).
		Order("name_key, id").Limit(maxListedViews).Find(&rows).Error
	if err != nil {
		return nil, translate(err, "saved view")
	}
	var mine, shared []domain.SavedView
	for _, r := range rows {
		v, err := r.toDomain()
		if err != nil {
			return nil, err
		}
		if v.OwnedBy(owner) {
			mine = append(mine, v)
		} else {
			shared = append(shared, v)
		}
	}
	return append(mine, shared...), nil
}

// UpdateView implements domain.SavedViewStore.
func (s *deskPeople) UpdateView(ctx context.Context, v domain.SavedView) error {
	res := s.db.WithContext(ctx).Model(&savedViewRow{}).Where("id = ?", v.ID).
		Updates(map[string]any{"name": v.Name, "name_key": nameKey(v.Name), "shared": v.Shared, "updated_at": v.UpdatedAt.UTC()})
	if res.Error != nil {
		return translate(res.Error, "saved view")
	}
	if res.RowsAffected == 0 {
		return domain.Errorf(domain.ENotFound, "no such saved view")
	}
	return nil
}

// DeleteView implements domain.SavedViewStore.
func (s *deskPeople) DeleteView(ctx context.Context, id string) error {
	res := s.db.WithContext(ctx).Where("id = ?", id).Delete(&savedViewRow{})
	if res.Error != nil {
		return translate(res.Error, "saved view")
	}
	if res.RowsAffected == 0 {
		return domain.Errorf(domain.ENotFound, "no such saved view")
	}
	return nil
}
