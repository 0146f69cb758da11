package mcp

import (
	"slices"
	"strings"
)

// baseEnv is what every command upstream gets of handoff mcp's environment
// without asking: enough to find programs, a home and a locale. Anything
// more is named in the upstream's pass_env or set in its env.
var baseEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR", "TZ", "TERM",
	"LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES",
	// Windows finds its system and profile through these.
	"SYSTEMROOT", "COMSPEC", "PATHEXT", "USERPROFILE", "APPDATA", "LOCALAPPDATA",
}

// upstreamEnv is the explicit environment of a command upstream: the base
// and pass_env variables taken from environ, then env's values. The
// variable named withhold (Handoff's token) is never among them.
func upstreamEnv(environ []string, cfg UpstreamConfig, withhold string) []string {
	var out []string
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == withhold {
			continue
		}
		if _, set := cfg.Env[name]; set {
			continue
		}
		if slices.Contains(baseEnv, name) || slices.Contains(cfg.PassEnv, name) {
			out = append(out, kv)
		}
	}
	for k, v := range cfg.Env {
		if k != withhold {
			out = append(out, k+"="+v)
		}
	}
	slices.Sort(out)
	return out
}
