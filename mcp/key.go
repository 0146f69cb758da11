package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// arguments are a tool call's arguments, decoded once.
type arguments map[string]json.RawMessage

func parseArguments(raw json.RawMessage) (arguments, error) {
	args := arguments{}
	if len(raw) == 0 || string(raw) == "null" {
		return args, nil
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, fmt.Errorf("the arguments are not a JSON object: %v", err)
	}
	return args, nil
}

// deriveKey makes the operation's business key for a call: the upstream and
// tool, then a SHA-256 over the key's arguments in their canonical form. Raw
// argument values never enter a key — they may be an email address or a
// phone number — so two calls share a key exactly when those arguments are
// equal.
func deriveKey(upstream string, t *ToolConfig, args arguments) (string, error) {
	names := t.Key.From
	if t.Key.Argument != "" {
		names = []string{t.Key.Argument}
		if v, ok := args[t.Key.Argument]; !ok || string(v) == "null" || string(v) == `""` {
			return "", fmt.Errorf("the argument %q (the call's idempotency key) is required", t.Key.Argument)
		}
	}
	parts := make([]any, 0, 2+len(names))
	parts = append(parts, upstream, t.Name)
	for _, n := range names {
		v, err := canonical(args[n])
		if err != nil {
			return "", fmt.Errorf("argument %q: %v", n, err)
		}
		parts = append(parts, map[string]any{n: v})
	}
	raw, _ := json.Marshal(parts)
	sum := sha256.Sum256(raw)
	return fmt.Sprintf("mcp.%s.%s:%s", upstream, keySafe(t.Name), hex.EncodeToString(sum[:16])), nil
}

// content is the operation's content: the configured arguments, absent ones
// left out.
func content(t *ToolConfig, args arguments) map[string]json.RawMessage {
	c := map[string]json.RawMessage{}
	for _, n := range t.Content {
		if v, ok := args[n]; ok {
			c[n] = v
		}
	}
	return c
}

// upstreamArguments are what the upstream is called with: the agent's
// arguments with the content replaced by the claimed snapshot — which is
// the approved one where the card needs approval — and without an
// idempotency-key argument the upstream does not know.
func upstreamArguments(t *ToolConfig, args arguments, snapshot map[string]json.RawMessage, stripKey bool) arguments {
	out := maps.Clone(args)
	for _, n := range t.Content {
		delete(out, n)
	}
	maps.Copy(out, snapshot)
	if stripKey {
		delete(out, t.Key.Argument)
	}
	return out
}

// differs names the content arguments whose snapshot value is not what the
// agent sent this time.
func differs(t *ToolConfig, sent, snapshot map[string]json.RawMessage) []string {
	var names []string
	for _, n := range t.Content {
		a, _ := canonical(sent[n])
		b, _ := canonical(snapshot[n])
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// canonical decodes a JSON value so that re-encoding it is independent of
// the sender's spacing and key order (encoding/json sorts map keys). Numbers
// are IEEE doubles, as in the ledger's canonical JSON (RFC 8785): 100 and
// 100.0 are one value.
func canonical(raw json.RawMessage) (any, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var v any
	err := json.Unmarshal(raw, &v)
	return v, err
}

// keySafe keeps a tool name within the key alphabet.
func keySafe(name string) string {
	b := []byte(name)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
		if !ok {
			b[i] = '_'
		}
	}
	if len(b) > 100 {
		b = b[:100]
	}
	return string(b)
}
