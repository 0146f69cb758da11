package store

import (
	"context"
	"strings"

	"github.com/opshandoff/handoff/domain"
)

// deskPeople is the store's part for the desk's people and the views they
// saved.
type deskPeople struct{ *conn }

var _ domain.PeopleStore = (*deskPeople)(nil)

// People lists the people who signed in, matching a part of their email,
// name or subject in any case, by name then email.
func (s *deskPeople) People(ctx context.Context, q domain.PeopleQuery) ([]domain.Person, error) {
	db := s.db.WithContext(ctx).Model(&personRow{})
	if t := strings.TrimSpace(q.Text); t != "" {
		like := "%" + escapeLike(strings.ToLower(t)) + "%"
		db = db.Where("LOWER(email) LIKE ? ESCAPE '\\' OR LOWER(name) LIKE ? ESCAPE '\\' OR LOWER(subject) LIKE ? ESCAPE '\\'",
			like, like, like)
	}
	if len(q.Roles) > 0 {
		names := make([]string, len(q.Roles))
		for i, r := range q.Roles {
			names[i] = r.String()
		}
		db = db.Where("role IN ?", names)
	}
	var rows []personRow
	if err := db.Order("LOWER(name), LOWER(email), issuer, subject").Limit(q.Limit).Find(&rows).Error; err != nil {
		return nil, translate(err, "person")
	}
	return people(rows)
}

// Person reads one person by (issuer, subject).
func (s *deskPeople) Person(ctx context.Context, issuer, subject string) (domain.Person, error) {
	var rows []personRow
	err := s.db.WithContext(ctx).Where("issuer = ? AND subject = ?", issuer, subject).Limit(1).Find(&rows).Error
	if err != nil {
		return domain.Person{}, translate(err, "person")
	}
	ps, err := people(rows)
	if err != nil {
		return domain.Person{}, err
	}
	if len(ps) == 0 {
		return domain.Person{}, domain.Errorf(domain.ENotFound, "%s at %s has never signed in", subject, issuer)
	}
	return ps[0], nil
}

// PeopleByIdentity lists the people an assignment to id means: by email in
// any case, or by subject for those who have no email.
func (s *deskPeople) PeopleByIdentity(ctx context.Context, id string) ([]domain.Person, error) {
	var rows []personRow
	err := s.db.WithContext(ctx).
		Where("(email <> '' AND LOWER(email) = ?) OR (email = '' AND subject = ?)", strings.ToLower(id), id).
		Order("last_seen_at DESC, issuer, subject").Limit(domain.MaxPeople).Find(&rows).Error
	if err != nil {
		return nil, translate(err, "person")
	}
	return people(rows)
}

func people(rows []personRow) ([]domain.Person, error) {
	out := make([]domain.Person, 0, len(rows))
	for _, r := range rows {
		role, err := domain.ParseRole(r.Role)
		if err != nil {
			return nil, domain.Wrap(domain.EInternal, err, "unreadable person row")
		}
		out = append(out, domain.Person{Issuer: r.Issuer, Subject: r.Subject, Email: r.Email, Name: r.Name, Role: role,
			LastSeenAt: r.LastSeenAt.UTC()})
	}
	return out, nil
}
