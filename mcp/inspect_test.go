package mcp

import (
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestRepeatRisk(t *testing.T) {
	yes, no := true, false
	uc := UpstreamConfig{Pass: []string{"delete_file", "append_line", "legacy"}, Tools: []ToolConfig{{Name: "edit_file"}}}
	for _, c := range []struct {
		tool *sdk.Tool
		want string
	}{
		{&sdk.Tool{Name: "edit_file", Annotations: &sdk.ToolAnnotations{DestructiveHint: &yes}}, ""},                        // guarded
		{&sdk.Tool{Name: "delete_file", Annotations: &sdk.ToolAnnotations{DestructiveHint: &yes}}, "destructiveHint: true"}, // passed explicitly
		{&sdk.Tool{Name: "append_line", Annotations: &sdk.ToolAnnotations{DestructiveHint: &no}}, "idempotentHint: false"},
		{&sdk.Tool{Name: "legacy"}, "nothing (so it may be destructive)"},
		{&sdk.Tool{Name: "read_file", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}}, ""},
		{&sdk.Tool{Name: "move_file", Annotations: &sdk.ToolAnnotations{DestructiveHint: &yes}}, ""}, // refused at call time
		{&sdk.Tool{Name: "touch", Annotations: &sdk.ToolAnnotations{DestructiveHint: &no, IdempotentHint: true}}, ""},
	} {
		if got := repeatRisk(uc, c.tool); got != c.want {
			t.Errorf("%s: %q, want %q", c.tool.Name, got, c.want)
		}
	}
}
