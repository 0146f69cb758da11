package domain

import "context"

// DeskQueueTotal counts what DeskQueue lists for q over all its pages: the
// total a list page shows, which the overview's figures link to. It narrows
// q as DeskQueue does — provider, awaiting lookups, hidden content — so the
// total is of the rows the person is shown.
func (l *Ledger) DeskQueueTotal(ctx context.Context, actor Actor, q ListQuery, provider string) (int, error) {
	ds, err := l.deskStore(actor)
	if err != nil {
		return 0, err
	}
	if err := q.check(provider); err != nil {
		return 0, err
	}
	if !l.Cards.narrowToProvider(&q, provider) {
		return 0, nil
	}
	q.AwaitingLookupOf = l.Cards.LookupTypes()
	l.Cards.hideContentFromSearch(actor, &q)
	return ds.DeskCount(ctx, q)
}
