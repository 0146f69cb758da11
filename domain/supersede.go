package domain

// supersede is the original's side of a registration that supersedes it:
// the cancelled original, still cancelled, learns which operation replaced
// it. The change is sealed onto the original's own audit stream (its next
// version, chained from its audit head) like any decision, so both streams
// stay gap-free; the store writes it with the new operation, atomically.
func supersede(orig, by Operation, env Env) (Change, error) {
	if orig.State != Cancelled || orig.SupersededBy != "" {
		e := Errorf(EOriginalUnresolved, "operation %s is %s; only a cancelled operation can be superseded once", orig.ID, orig.State)
		e.Operation = &orig
		return Change{}, e
	}
	ch := begin(orig, env, Cancelled, "superseded")
	ch.Op.SupersededBy = by.ID
	ch.Events[0].Detail = detail(map[string]any{"superseded_by": by.ID, "key": by.Key})
	stamp(&ch, env)
	seal(&ch)
	ch.Before = &orig // the store writes only the link, not the rest as loaded
	return ch, nil
}
