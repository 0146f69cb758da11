package domain

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// A saved view is the filter of one of the desk's list pages — the queue,
// Operations, the audit trail — that a person keeps under a name, to open
// again with one click; shared, everyone signed in sees it in the page's
// list. It belongs to the person by (issuer, subject), as an assignment
// does, so it follows them when their email changes. Only its owner, or an
// admin, renames or deletes it.
//
// A view is a preference, not a decision: it changes no operation and
// grants nothing — the page it opens checks what the person may see, as it
// does for a typed URL — so, like the time and density choices, it is not
// written to the audit trail. Its row keeps who saved it and when.

// Limits of saved views.
const (
	MaxViewName       = 80  // characters of a view's name
	MaxViewsPerPerson = 100 // views one person keeps, over every page
	maxViewValue      = 500 // characters of one filter value
)

// ViewFields are the filter fields a view of each page keeps: the page's
// query parameters, and nothing else.
var ViewFields = map[string][]string{
	"queue":      {"q", "state", "type", "provider", "namespace", "assignee", "age", "mine", "error", "sort"},
	"operations": {"q", "state", "type", "provider", "namespace", "assignee", "age", "mine", "error", "sort"},
	"audit":      {"operation", "actor", "action", "from", "to"},
}

// ViewPagePath is the address of a view's page.
func ViewPagePath(page string) string {
	switch page {
	case "operations":
		return DeskOperations
	case "audit":
		return "/desk/audit"
	}
	return "/desk/queue"
}

// SavedView is one person's named filter of a list page.
type SavedView struct {
	ID string
	// Owner is who saved it: Issuer and Subject are the key, Email and
	// Name what they were when it was saved, to say whose it is.
	Owner     Actor
	Page      string            // queue, operations or audit
	Name      string            // unique, in any case, among the owner's views of the page
	Filter    map[string]string // ViewFields of the page, each non-empty
	Shared    bool
	CreatedAt time.Time
	UpdatedAt time.Time
}

// OwnedBy reports whether a is the view's owner.
func (v SavedView) OwnedBy(a Actor) bool {
	return a.Kind == ActorPerson && a.Issuer == v.Owner.Issuer && a.Subject == v.Owner.Subject
}

// Views holds the saved views of the desk's list pages: a person's
// preferences, kept beside the ledger, never a decision on an operation.
type Views struct {
	*core
	store ViewsStorage
}

// ViewsStorage is the store methods Views calls. The store package
// implements it.
type ViewsStorage interface {
	SavedViewStore
}

// NewViews builds the saved views' use cases on s with the real clock.
func NewViews(s ViewsStorage, cards Cards) *Views { return newViews(newCore(nil, cards), s) }

func newViews(c *core, s ViewsStorage) *Views { return &Views{core: c, store: s} }

// SavedViewStore keeps saved views. The store package implements it.
type SavedViewStore interface {
	// CreateView writes v, unless its owner already keeps max views
	// (EInvalid) or a view of the page under the same name in any case
	// (EConflict); nothing is written then.
	CreateView(ctx context.Context, v SavedView, max int) error
	// SavedView reads one view; ENotFound when there is none.
	SavedView(ctx context.Context, id string) (SavedView, error)
	// SavedViews lists the page's views that owner keeps or anyone shared:
	// the owner's first, then the shared, each by name.
	SavedViews(ctx context.Context, page string, owner Actor) ([]SavedView, error)
	// UpdateView writes v's name, sharing and UpdatedAt; EConflict when its
	// owner has another view of the page under the name.
	UpdateView(ctx context.Context, v SavedView) error
	// DeleteView deletes one view; ENotFound when there is none.
	DeleteView(ctx context.Context, id string) error
}

// validViewName checks a view's name: 1-80 characters, printable.
func validViewName(name string) []FieldError {
	n := utf8.RuneCountInString(name)
	switch {
	case strings.TrimSpace(name) == "":
		return []FieldError{{"name", "is required: name the view"}}
	case n > MaxViewName:
		return []FieldError{{"name", fmt.Sprintf("may be at most %d characters, not %d", MaxViewName, n)}}
	case !printable(name):
		return []FieldError{{"name", "must be plain text, without control or invisible characters"}}
	}
	return nil
}

// printable reports whether s is valid UTF-8 without control, format
// (bidi, zero-width) or other invisible characters.
func printable(s string) bool {
	if !ValidText(s) {
		return false
	}
	for _, r := range s {
		if r != ' ' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || !unicode.IsPrint(r)) {
			return false
		}
	}
	return true
}

// validViewFilter checks that the filter holds only the page's fields,
// each a short text.
func validViewFilter(page string, f map[string]string) []FieldError {
	fields, ok := ViewFields[page]
	if !ok {
		return []FieldError{{"page", "must be queue, operations or audit"}}
	}
	var errs []FieldError
	keys := make([]string, 0, len(f))
	for k := range f {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := f[k]
		switch {
		case !slices.Contains(fields, k):
			errs = append(errs, FieldError{"filter." + k, "is not a filter of the " + page + " page"})
		case v == "":
			errs = append(errs, FieldError{"filter." + k, "is empty"})
		case utf8.RuneCountInString(v) > maxViewValue || !ValidText(v):
			errs = append(errs, FieldError{"filter." + k, fmt.Sprintf("must be text of at most %d characters", maxViewValue)})
		}
	}
	return errs
}

// SaveView keeps the person's filter of a page under a name.
func (l *Views) SaveView(ctx context.Context, actor Actor, v SavedView) (SavedView, error) {
	if err := requirePerson(actor, RoleViewer); err != nil {
		return SavedView{}, err
	}
	v.Name = strings.TrimSpace(v.Name)
	errs := append(validViewFilter(v.Page, v.Filter), validViewName(v.Name)...)
	if len(errs) > 0 {
		return SavedView{}, Invalid(errs...)
	}
	now := l.Now().UTC()
	v.ID, v.Owner, v.CreatedAt, v.UpdatedAt = l.IDs.New("view"), actor, now, now
	if err := l.store.CreateView(ctx, v, MaxViewsPerPerson); err != nil {
		return SavedView{}, viewConflict(err, v.Name)
	}
	return v, nil
}

// SavedViews lists the page's views the person may open: their own and
// those anyone shared.
func (l *Views) SavedViews(ctx context.Context, actor Actor, page string) ([]SavedView, error) {
	if err := requirePerson(actor, RoleViewer); err != nil {
		return nil, err
	}
	if _, ok := ViewFields[page]; !ok {
		return nil, Invalid(FieldError{"page", "must be queue, operations or audit"})
	}
	return l.store.SavedViews(ctx, page, actor)
}

// UpdateView renames a view and shares it or stops sharing it. Only its
// owner or an admin may.
func (l *Views) UpdateView(ctx context.Context, actor Actor, id, name string, shared bool) (SavedView, error) {
	v, err := l.ownView(ctx, actor, id)
	if err != nil {
		return SavedView{}, err
	}
	name = strings.TrimSpace(name)
	if errs := validViewName(name); len(errs) > 0 {
		return SavedView{}, Invalid(errs...)
	}
	v.Name, v.Shared, v.UpdatedAt = name, shared, l.Now().UTC()
	if err := l.store.UpdateView(ctx, v); err != nil {
		return SavedView{}, viewConflict(err, name)
	}
	return v, nil
}

// DeleteView deletes a view. Only its owner or an admin may.
func (l *Views) DeleteView(ctx context.Context, actor Actor, id string) (SavedView, error) {
	v, err := l.ownView(ctx, actor, id)
	if err != nil {
		return SavedView{}, err
	}
	return v, l.store.DeleteView(ctx, id)
}

// ownView reads a view the actor may change. Someone else's view that is
// not shared is not found: they could not see it.
func (l *Views) ownView(ctx context.Context, actor Actor, id string) (SavedView, error) {
	if err := requirePerson(actor, RoleViewer); err != nil {
		return SavedView{}, err
	}
	if err := checkID(id, "saved view"); err != nil {
		return SavedView{}, err
	}
	v, err := l.store.SavedView(ctx, id)
	if err != nil {
		return SavedView{}, err
	}
	switch {
	case v.OwnedBy(actor):
		return v, nil
	case !v.Shared:
		return SavedView{}, Errorf(ENotFound, "no such saved view")
	case actor.Role.AtLeast(RoleAdmin):
		return v, nil
	}
	return SavedView{}, Errorf(EForbidden, "only %s, who saved it, or an admin may change the view %q", v.Owner.Identity(), v.Name)
}

// viewConflict says a duplicate name as the field to correct.
func viewConflict(err error, name string) error {
	if ErrorCode(err) == EConflict {
		return Invalid(FieldError{"name", fmt.Sprintf("there is already a view named %q on this page: choose another name", name)})
	}
	return err
}
