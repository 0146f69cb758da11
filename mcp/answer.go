package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/opshandoff/handoff/client"
)

// answer turns what the ledger said about a guarded call into the tool
// result the agent reads. Every answer carries _meta.handoff with the
// operation, its state and whether the result is a replay.
func (p *Proxy) answer(c *call, op client.Operation, err error) *sdk.CallToolResult {
	var pe *client.Problem
	if errors.As(err, &pe) && pe.Operation != nil && op.ID == "" {
		op = *pe.Operation
	}
	meta := map[string]any{"key": c.key, "type": c.route.guard.Type}
	if op.ID != "" {
		meta["operation"], meta["state"], meta["desk_url"] = op.ID, op.State, p.deskURL(op)
	}
	switch {
	case pe != nil && pe.Code == "not_claimable":
		return p.notClaimable(c, op, pe.Reason, meta)
	case pe != nil && pe.Code == "fingerprint_mismatch":
		meta["conflict"] = "fingerprint_mismatch"
		if op.State == "awaiting_approval" {
			return errorResult(fmt.Sprintf("Approval is pending for operation %s, with the arguments first sent under this key; "+
				"these different arguments were not recorded. Ask a person to approve or revise it at %s, then call again.", op.ID, p.deskURL(op)), meta)
		}
		return errorResult(fmt.Sprintf("Conflict: operation %s (key %s) was already recorded with other arguments (%s). "+
			"Handoff refuses to run the same action with different content; if this is a new action it needs other key arguments (%s).",
			op.ID, c.key, strings.Join(c.route.guard.Content, ", "), keyArgs(c.route.guard)), meta)
	case pe != nil && op.State == "" && c.executed == nil:
		return errorResult(fmt.Sprintf("Handoff refused the call; it was not made: %s", pe.Error()), meta)
	case err != nil && c.executed == nil && c.failure == "":
		if op.State == "" || op.State == "received" || op.State == "processing" {
			return errorResult(fmt.Sprintf("Handoff could not be reached (%v); the call was not made. Retry it with the same arguments.", err), meta)
		}
	}
	switch op.State {
	case "completed":
		return p.completed(c, op, meta)
	case "unknown_outcome", "failed_terminal":
		return p.handedOff(c, op, meta)
	case "failed_retryable":
		msg := fmt.Sprintf("The call failed (%s); Handoff allows a retry with the same arguments in %d s.", lastError(c, op), retryIn(op.NextRetryAt))
		return withUpstream(errorResult(msg, meta), c.executed)
	}
	return errorResult(fmt.Sprintf("Handoff could not record the call's outcome (%v); operation %s is %s. "+
		"Do not call it under other arguments; retry with the same ones.", err, op.ID, op.State), meta)
}

// completed: the upstream's answer when this call ran it, else the stored
// (or confirmed) result, marked replayed.
func (p *Proxy) completed(c *call, op client.Operation, meta map[string]any) *sdk.CallToolResult {
	if c.executed != nil {
		meta["replayed"] = false
		res := *c.executed
		if diff := differs(c.route.guard, c.sent, c.snapshot); len(diff) > 0 {
			meta["approved_snapshot"] = true
			note := fmt.Sprintf("Handoff ran the approved snapshot of operation %s (content version %d), not the arguments of this call: %s differed. "+
				"The result below is for the approved arguments.", op.ID, op.ContentVersion, strings.Join(diff, ", "))
			res.Content = append([]sdk.Content{&sdk.TextContent{Text: note}}, res.Content...)
		}
		res.Meta = mergeMeta(res.Meta, meta)
		return &res
	}
	meta["replayed"] = true
	var s storedResult
	res := &sdk.CallToolResult{}
	if op.Result != nil && json.Unmarshal(op.Result.Data, &s) == nil && len(s.Result) > 0 && json.Unmarshal(s.Result, res) == nil {
		if s.Truncated {
			meta["truncated"] = true
		}
	} else {
		ref, data := "", ""
		if op.Result != nil {
			ref = op.Result.Ref
			if len(op.Result.Data) > 0 && string(op.Result.Data) != "null" {
				data = " Recorded data: " + truncate(string(op.Result.Data), 4000)
			}
		}
		res = &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{
			Text: fmt.Sprintf("This call already happened: a person confirmed that operation %s executed (reference %s).%s", op.ID, ref, data)}}}
		meta["confirmed_by_person"] = true
	}
	if c.route.tool.OutputSchema != nil && res.StructuredContent == nil {
		// The tool promises structured output that this replay cannot give:
		// an error result keeps clients that check it from failing — and the
		// text still says it happened, so the agent does not call again.
		res.IsError = true
		res.Content = append(res.Content, &sdk.TextContent{Text: "Its structured result is not stored; do not call the tool again for it."})
	}
	res.Meta = mergeMeta(res.Meta, meta)
	return res
}

// handedOff: a person decides what happened; the agent must not route
// around that with a new key.
func (p *Proxy) handedOff(c *call, op client.Operation, meta map[string]any) *sdk.CallToolResult {
	what := "its outcome is unknown"
	if op.State == "failed_terminal" {
		what = "it failed in a way no retry fixes"
	}
	msg := fmt.Sprintf("Operation %s (%s, key %s): %s (%s). A person is reconciling it at %s. "+
		"Do NOT retry this under a new key or with changed arguments: that could do it twice. "+
		"Calling again with the same arguments is safe and returns the outcome once the person has decided.",
		op.ID, c.route.guard.Type, c.key, what, lastError(c, op), p.deskURL(op))
	meta["handed_off"] = true
	return withUpstream(errorResult(msg, meta), c.executed)
}

func (p *Proxy) notClaimable(c *call, op client.Operation, reason string, meta map[string]any) *sdk.CallToolResult {
	meta["reason"] = reason
	switch reason {
	case "in_progress":
		var until = op.NextRetryAt
		if op.Lease != nil {
			until = &op.Lease.ExpiresAt
		}
		n := retryIn(until)
		meta["retry_after_seconds"] = n
		return errorResult(fmt.Sprintf("Operation %s is already running (%s). Retry the same call in %d s for its result.", op.ID, leaseHolder(op), n), meta)
	case "retry_later":
		n := retryIn(op.NextRetryAt)
		meta["retry_after_seconds"] = n
		return errorResult(fmt.Sprintf("Operation %s failed before (%s); retry the same call in %d s.", op.ID, lastError(c, op), n), meta)
	case "awaiting_approval":
		meta["approval_pending"] = true
		return errorResult(fmt.Sprintf("Approval pending: operation %s (%s) needs a person's approval before it runs; nothing was executed. "+
			"It is at %s. Call again with the same arguments after approval; the approved arguments are what will run.",
			op.ID, c.route.guard.Type, p.deskURL(op)), meta)
	case "handed_off":
		return p.handedOff(c, op, meta)
	case "cancelled":
		return errorResult(fmt.Sprintf("Operation %s was cancelled by a person (see %s); it will not run. Do not retry it under a new key.",
			op.ID, p.deskURL(op)), meta)
	}
	return errorResult(fmt.Sprintf("Operation %s cannot run now (%s).", op.ID, reason), meta)
}

func (p *Proxy) deskURL(op client.Operation) string {
	path := op.Links.Desk
	if path == "" {
		path = "/desk/operations/" + op.ID
	}
	return p.cfg.publicURL() + path
}

func lastError(c *call, op client.Operation) string {
	switch {
	case c.failure != "":
		return c.failure
	case op.LastError != nil && op.LastError.Message != "":
		return op.LastError.Class + ": " + op.LastError.Message
	case op.LastError != nil:
		return op.LastError.Class
	}
	return "no error recorded"
}

func leaseHolder(op client.Operation) string {
	if op.Lease != nil {
		return "by " + op.Lease.Worker
	}
	return "elsewhere"
}

func keyArgs(t *ToolConfig) string {
	if t.Key.Argument != "" {
		return t.Key.Argument
	}
	return strings.Join(t.Key.From, ", ")
}

// withUpstream appends the upstream's own error content, when it answered.
func withUpstream(r *sdk.CallToolResult, upstream *sdk.CallToolResult) *sdk.CallToolResult {
	if upstream != nil {
		r.Content = append(r.Content, upstream.Content...)
	}
	return r
}

func mergeMeta(m sdk.Meta, handoff map[string]any) sdk.Meta {
	out := sdk.Meta{}
	for k, v := range m {
		out[k] = v
	}
	out["handoff"] = handoff
	return out
}
