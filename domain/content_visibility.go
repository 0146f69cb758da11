package domain

import "sort"

// A card may keep its content from people below a role
// (content_visible_to): they see the content's hash and size, never the
// content, its versions or the result data — on the desk and through the
// API alike. Workflows always see what they registered.

// MayReadContent reports whether actor may read the content of the card's
// operations.
func (c Card) MayReadContent(actor Actor) bool {
	return c.ContentVisibleTo == (Role{}) || actor.Kind != ActorPerson || actor.Role.AtLeast(c.ContentVisibleTo)
}

// hideContent keeps the content of op from actor when its card says so:
// ContentBytes keeps the size and ContentSHA256 the hash.
func (l *core) hideContent(actor Actor, op *Operation) bool {
	card, err := l.Cards.Get(op.Type)
	if err != nil || card.MayReadContent(actor) {
		return false
	}
	op.ContentHidden, op.ContentBytes, op.Content = true, len(op.Content), nil
	if op.Result != nil {
		r := *op.Result
		r.Data = nil
		op.Result = &r
	}
	return true
}

// hideVersions empties the content of every version, keeping hash and size.
func hideVersions(vs []ContentVersion) {
	for i := range vs {
		vs[i].Hidden, vs[i].Bytes, vs[i].Content = true, len(vs[i].Content), nil
	}
}

// hideContentFromSearch keeps a search by actor from matching the content
// of the types whose content actor may not read.
func (cs Cards) hideContentFromSearch(actor Actor, q *ListQuery) {
	q.ContentHiddenTypes = nil
	for name, c := range cs {
		if !c.MayReadContent(actor) {
			q.ContentHiddenTypes = append(q.ContentHiddenTypes, name)
		}
	}
	sort.Strings(q.ContentHiddenTypes) // one SQL text per set of types
}

// hidesContentFromViewers reports whether the card keeps its content from
// viewers.
func (c Card) hidesContentFromViewers() bool { return !RoleViewer.AtLeast(c.ContentVisibleTo) }

// SendsHiddenContent reports whether notifications to d would carry content
// the card hides from viewers to a receiver not marked as allowed to read it.
func (c Card) SendsHiddenContent(d Destination) bool {
	return c.NotifyIncludeData && c.hidesContentFromViewers() && !d.SeesHiddenContent
}
