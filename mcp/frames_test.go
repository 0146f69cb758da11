package mcp

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
)

func deepArgs(n int) string {
	return strings.Repeat("[", n) + `"x"` + strings.Repeat("]", n)
}

func TestFrameGuard_replacesWhatTheSDKCannotDecode(t *testing.T) {
	deep := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"charge","arguments":{"memo":` + deepArgs(1001) + `}}}`
	long := `{"jsonrpc":"2.0","method":"tools/call","id":"a-8","params":{"name":"refund","arguments":{"memo":"` + strings.Repeat("x", maxFrameBytes) + `"}}}`
	plain := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"charge","arguments":{"memo":"ok"}}}`
	otherDeep := `{"jsonrpc":"2.0","id":10,"method":"resources/read","params":{"x":` + deepArgs(600) + `}}`
	note := `{"jsonrpc":"2.0","method":"notifications/x","params":{"x":` + deepArgs(600) + `}}`
	in := io.NopCloser(strings.NewReader(strings.Join([]string{deep, long, plain, otherDeep, note, plain}, "\n") + "\n"))
	out, err := io.ReadAll(newFrameGuard(in))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 5 {
		t.Fatalf("got %d lines, want 5 (the notification dropped): %.300s", len(lines), out)
	}
	type call struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"params"`
	}
	for i, want := range []struct{ id, method, name, why string }{
		{"7", "tools/call", "charge", "nested deeper than 256"},
		{`"a-8"`, "tools/call", "refund", "larger than"},
		{"9", "tools/call", "charge", ""},
		{"10", "ping", "", ""},
		{"9", "tools/call", "charge", ""},
	} {
		var c call
		if err := json.Unmarshal([]byte(lines[i]), &c); err != nil {
			t.Fatalf("line %d does not decode: %v", i, err)
		}
		why, refused := refusedFrame(c.Params.Arguments)
		if string(c.ID) != want.id || c.Method != want.method || c.Params.Name != want.name || refused != (want.why != "") || !strings.Contains(why, want.why) {
			t.Errorf("line %d: %s %s %s refused=%v %q, want %+v", i, c.ID, c.Method, c.Params.Name, refused, why, want)
		}
	}
	if lines[2] != plain {
		t.Errorf("a plain call was changed: %s", lines[2])
	}
}

func TestEnvelope_readsKeysNotValues(t *testing.T) {
	msg := `{"params":{"arguments":{"name":"evil","id":1},"name":"charge"},"jsonrpc":"2.0","method":"tools/call","id":12}`
	id, method, tool := envelope([]byte(msg))
	if string(id) != "12" || string(method) != `"tools/call"` || string(tool) != `"charge"` {
		t.Fatalf("got %s %s %s", id, method, tool)
	}
}
