package web

import (
	"context"
	"fmt"
	"regexp"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/views/pages"
)

// twinIDRE finds the twin's ID in a twin_unresolved hold's message, which
// names it as "key (op_…)".
var twinIDRE = regexp.MustCompile(`\((op_[0-9A-Za-z]+)\)`)

// twinView sets an operation held as a possible second execution beside
// the operation it may repeat, as the person may see it: nil when op is not
// held for that. The twin is read with the person's rights, so a twin in a
// namespace they cannot see is named, not shown, and content the card
// hides from them is not compared.
func (s *server) twinView(ctx context.Context, person domain.Actor, op domain.Operation) *pages.TwinView {
	e := op.LastError
	if op.State != domain.AwaitingApproval || e == nil || (e.Code != domain.CodeTwinUnresolved && e.Code != domain.CodeSupersedesSent) {
		return nil
	}
	t := &pages.TwinView{Code: e.Code, Why: e.Message, This: twinSide(op)}
	id := twinID(op)
	if id == "" {
		t.Missing = "The hold does not name an operation to compare with."
		return t
	}
	other, err := s.ledger.Desk.Get(ctx, person, id)
	if err != nil {
		t.Missing = fmt.Sprintf("Its twin %s cannot be shown here (%s).", id, domain.ErrorCode(err))
		return t
	}
	t.Other = twinSide(other)
	switch {
	case op.ContentHidden || other.ContentHidden:
		t.ContentHidden = true
	case op.ContentSHA256 == other.ContentSHA256:
		t.Same = true
	default:
		t.Diff, t.DiffTruncated = boundedDiff(other.Content, op.Content)
	}
	return t
}

// twinID is the operation op's hold names: the twin in the message of an
// unresolved twin, else the operation op supersedes.
func twinID(op domain.Operation) string {
	if op.LastError.Code != domain.CodeTwinUnresolved {
		return op.Supersedes
	}
	if m := twinIDRE.FindStringSubmatch(op.LastError.Message); m != nil {
		return m[1]
	}
	return ""
}

func twinSide(op domain.Operation) pages.TwinSide {
	return pages.TwinSide{ID: op.ID, Key: op.Key, State: op.State.String(), ProviderKey: op.ProviderKey,
		ContentSHA256: op.ContentSHA256, ContentVersion: op.ContentVersion, Attempts: op.Attempts,
		SentAt: op.ProviderKeyFirstSentAt, CreatedAt: op.CreatedAt}
}
