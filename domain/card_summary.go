package domain

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A card may name summary fields: JSON pointers into the content (the
// amount, the customer) that the desk shows beside each key in its lists,
// where keys alone look alike. They are content, so they are shown only to
// those the card lets read it (content_visible_to).

// MaxSummaryFields bounds a card's summary; maxSummaryRunes one value.
const (
	MaxSummaryFields = 4
	maxSummaryRunes  = 60
)

// SummaryField is one summary field of an operation: the pointer's last
// token as its name, and its value as text.
type SummaryField struct{ Name, Value string }

func validateSummary(c Card) []FieldError {
	if len(c.Summary) > MaxSummaryFields {
		return []FieldError{{"summary", "names at most " + strconv.Itoa(MaxSummaryFields) + " fields"}}
	}
	for _, p := range c.Summary {
		if p == "" || !validPointer(p) {
			return []FieldError{{"summary", "must list JSON pointers into the content, such as /amount: " + strconv.Quote(p) + " is not one"}}
		}
	}
	return nil
}

// SummaryOf reads the card's summary fields from op's content for actor:
// nothing when the card keeps the content from them, or when the content
// is hidden or purged. A field the content lacks is left out.
func (c Card) SummaryOf(op Operation, actor Actor) []SummaryField {
	if len(c.Summary) == 0 || op.ContentHidden || len(op.Content) == 0 || !c.MayReadContent(actor) {
		return nil
	}
	var doc any
	if json.Unmarshal(op.Content, &doc) != nil {
		return nil
	}
	var out []SummaryField
	for _, p := range c.Summary {
		v, ok := JSONPointer(doc, p)
		if !ok {
			continue
		}
		text, isString := v.(string)
		if !isString {
			b, _ := json.Marshal(v)
			text = string(b)
		}
		if utf8.RuneCountInString(text) > maxSummaryRunes {
			text = string([]rune(text)[:maxSummaryRunes-1]) + "…"
		}
		name := p[strings.LastIndex(p, "/")+1:]
		out = append(out, SummaryField{Name: strings.ReplaceAll(strings.ReplaceAll(name, "~1", "/"), "~0", "~"), Value: text})
	}
	return out
}

// Summaries reads the summary fields of the operations ids for actor, by
// operation ID: only those whose card names some and lets actor read the
// content, in actor's namespace. Nothing is read when no card names any.
func (l *Desk) Summaries(ctx context.Context, actor Actor, ids []string) (map[string][]SummaryField, error) {
	if err := requirePerson(actor, RoleViewer); err != nil {
		return nil, err
	}
	named := false
	for _, c := range l.Cards {
		named = named || (len(c.Summary) > 0 && c.MayReadContent(actor))
	}
	if !named || len(ids) == 0 {
		return nil, nil
	}
	ops, _, err := l.store.LoadMany(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := map[string][]SummaryField{}
	for _, op := range ops {
		if ns := scope(actor); ns != "" && op.Namespace != ns {
			continue
		}
		if card, err := l.Cards.Get(op.Type); err == nil {
			if fs := card.SummaryOf(op, actor); len(fs) > 0 {
				out[op.ID] = fs
			}
		}
	}
	return out, nil
}
