package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// An agent's message that the MCP SDK cannot decode ends the whole session:
// one call nested too deep, or too long, would stop the proxy for every
// later call. frameGuard sits between standard input and the SDK and
// replaces such a message with one the SDK can decode, carrying the same
// request ID and tool name and a marker in place of the arguments; the tool
// handler answers the marker with an error result for that call alone.

const (
	// maxFrameDepth is far above what content may nest (the ledger refuses
	// deeper content with its own answer) and below the SDK decoder's limit.
	maxFrameDepth = 256
	// maxFrameBytes bounds one message; the ledger takes far less content.
	maxFrameBytes = 4 << 20
	// refusedArgument marks the arguments of a replaced message.
	refusedArgument = "_handoff_refused"
)

// frameGuard is an io.ReadCloser over newline-delimited JSON-RPC.
type frameGuard struct {
	in      *bufio.Reader
	closer  io.Closer
	pending []byte
}

func newFrameGuard(r io.ReadCloser) *frameGuard {
	return &frameGuard{in: bufio.NewReaderSize(r, 64<<10), closer: r}
}

func (g *frameGuard) Close() error { return g.closer.Close() }

func (g *frameGuard) Read(p []byte) (int, error) {
	for len(g.pending) == 0 {
		line, err := g.line()
		if len(line) > 0 {
			g.pending = guardFrame(line)
		}
		if err != nil && len(g.pending) == 0 {
			return 0, err
		}
	}
	n := copy(p, g.pending)
	g.pending = g.pending[n:]
	return n, nil
}

// line reads one line, newline included; past maxFrameBytes it keeps the
// start (where the ID and method are) and drops the rest, marked as cut by
// a missing newline.
func (g *frameGuard) line() ([]byte, error) {
	var out []byte
	for {
		chunk, err := g.in.ReadSlice('\n')
		if len(out) <= maxFrameBytes {
			out = append(out, chunk[:min(len(chunk), maxFrameBytes+1-len(out))]...)
		}
		if err != bufio.ErrBufferFull {
			return out, err
		}
	}
}

// guardFrame returns the line as it is, or its replacement when it is too
// long or nested too deep for the SDK.
func guardFrame(line []byte) []byte {
	tooLong := len(line) > maxFrameBytes
	if !tooLong && depthOf(line) <= maxFrameDepth {
		return line
	}
	why := fmt.Sprintf("the call's arguments are nested deeper than %d levels", maxFrameDepth)
	if tooLong {
		why = fmt.Sprintf("the call is larger than %d bytes", maxFrameBytes)
	}
	id, method, tool := envelope(line)
	if id == nil {
		return nil // a notification: nobody waits for an answer
	}
	if string(method) != `"tools/call"` || tool == nil {
		method, tool = []byte(`"ping"`), nil
	}
	msg := map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": json.RawMessage(method)}
	if tool != nil {
		msg["params"] = map[string]any{"name": json.RawMessage(tool), "arguments": map[string]string{refusedArgument: why}}
	}
	out, err := json.Marshal(msg)
	if err != nil {
		return nil
	}
	return append(out, '\n')
}

// depthOf is how deep objects and arrays nest in a JSON text.
func depthOf(b []byte) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for _, c := range b {
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString:
			inString = c != '"'
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

// envelope finds a JSON-RPC message's "id" and "method" and its params'
// "name" without decoding the rest: raw JSON values, nil where absent or
// not a plain string or number.
func envelope(b []byte) (id, method, tool []byte) {
	depth, inString, escaped := 0, false, false
	var key []byte
	start, inParams := -1, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString && c == '"':
			inString = false
			if start >= 0 {
				key = b[start+1 : i]
				start = -1
			}
		case inString:
		case c == '"':
			inString = true
			if depth == 1 || (depth == 2 && inParams) {
				if keyPosition(b[:i]) {
					start = i
				} else if v := scalarValue(b[i:]); v != nil && key != nil {
					id, method, tool = assign(depth, inParams, string(key), v, id, method, tool)
					key = nil
				}
			}
		case c == '{' || c == '[':
			depth++
			if depth == 2 && string(key) == "params" && c == '{' {
				inParams = true
			}
			key = nil
		case c == '}' || c == ']':
			depth--
			if depth == 1 {
				inParams = false
			}
		case (c == '-' || (c >= '0' && c <= '9')) && key != nil && depth == 1:
			if v := scalarValue(b[i:]); v != nil {
				id, method, tool = assign(depth, inParams, string(key), v, id, method, tool)
				key = nil
				i += len(v) - 1
			}
		}
	}
	return id, method, tool
}

// keyPosition reports whether a string starting after prefix is an object
// key: the last non-space byte before it opens an object or ends a member.
func keyPosition(prefix []byte) bool {
	t := bytes.TrimRight(prefix, " \t\r\n")
	return len(t) > 0 && (t[len(t)-1] == '{' || t[len(t)-1] == ',')
}

func assign(depth int, inParams bool, key string, v, id, method, tool []byte) ([]byte, []byte, []byte) {
	switch {
	case depth == 1 && key == "id":
		id = v
	case depth == 1 && key == "method":
		method = v
	case depth == 2 && inParams && key == "name":
		tool = v
	}
	return id, method, tool
}

// scalarValue is the JSON string or number at the start of b, or nil.
func scalarValue(b []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(b))
	var v json.RawMessage
	if dec.Decode(&v) != nil || len(v) == 0 || (v[0] != '"' && v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
		return nil
	}
	return v
}

// refusedFrame reports why frameGuard replaced a call's arguments.
func refusedFrame(raw json.RawMessage) (string, bool) {
	var m map[string]string
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil || len(m) != 1 {
		return "", false
	}
	why, ok := m[refusedArgument]
	return why, ok
}

// stdout is standard output as the SDK's transport wants it: closing it is
// left to the process.
type stdout struct{ io.Writer }

func (stdout) Close() error { return nil }
