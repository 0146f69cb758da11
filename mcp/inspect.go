package mcp

import (
	"context"
	"fmt"
	"slices"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Inspect reaches each upstream, reads the tools it lists and warns about
// the ones that would pass through unguarded although a repeated call may
// act twice: annotations that say destructiveHint: true, or
// idempotentHint: false on a tool that writes. An upstream that cannot be
// reached is a warning too: its tools were not checked.
func (c *Config) Inspect(ctx context.Context) []string {
	var warnings []string
	impl := &sdk.Implementation{Name: "handoff-mcp-check", Version: "1"}
	for _, uc := range c.Upstreams {
		u, err := connectUpstream(ctx, uc, impl, c.tokenEnv())
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("warn  %v: its tools' annotations were not checked", err))
			continue
		}
		for _, t := range u.tools {
			if why := repeatRisk(uc, t); why != "" {
				warnings = append(warnings, fmt.Sprintf("warn  upstream %s: tool %s passes through unguarded, but its annotations say %s: "+
					"an agent's retry may run it twice; guard it under tools", uc.Name, t.Name, why))
			}
		}
		u.close()
	}
	return warnings
}

// repeatRisk says why a tool that would pass through unguarded may act
// twice when called twice, or "" when it is guarded, refused or safe.
func repeatRisk(uc UpstreamConfig, t *sdk.Tool) string {
	if slices.ContainsFunc(uc.Tools, func(g ToolConfig) bool { return g.Name == t.Name }) {
		return ""
	}
	if !mayPass(t) && !slices.Contains(uc.Pass, t.Name) {
		return "" // refused at call time
	}
	a := t.Annotations
	switch {
	case a == nil:
		return "nothing (so it may be destructive)"
	case a.ReadOnlyHint:
		return ""
	case a.DestructiveHint != nil && *a.DestructiveHint:
		return "destructiveHint: true"
	case !a.IdempotentHint:
		return "idempotentHint: false"
	}
	return ""
}
