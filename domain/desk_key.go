package domain

import "context"

// GetByKey returns the operation with the key in the namespace, when the
// actor may see it: a workflow sees only its own namespace, and an
// operation it may not see is not found, never hinted at. It is how the
// desk follows caused_by, which names the parent by its key.
func (l *Desk) GetByKey(ctx context.Context, actor Actor, namespace, key string) (Operation, error) {
	if !ValidKey(key) || actor.Kind == ActorWorkflow && namespace != actor.Namespace {
		return Operation{}, Errorf(ENotFound, "no such operation")
	}
	op, _, err := l.store.LoadByKey(ctx, namespace, key)
	if err == nil {
		l.hideContent(actor, &op)
	}
	return op, err
}
