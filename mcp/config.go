package mcp

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
)

// Config is one `handoff mcp` configuration file.
type Config struct {
	Handoff   HandoffConfig    `yaml:"handoff"`
	Upstreams []UpstreamConfig `yaml:"upstreams"`

	file string // where it was read from, for messages
}

// HandoffConfig says which Handoff server to use and where the workflow
// token is (never the token itself: configuration files get shared).
type HandoffConfig struct {
	URL       string `yaml:"url"`        // default $HANDOFF_URL
	TokenEnv  string `yaml:"token_env"`  // default HANDOFF_TOKEN
	PublicURL string `yaml:"public_url"` // the desk's address in messages; default url
}

// UpstreamConfig is one upstream MCP server: a command spawned over stdio,
// or a streamable HTTP URL.
type UpstreamConfig struct {
	Name    string            `yaml:"name"`
	Command []string          `yaml:"command"`
	Env     map[string]string `yaml:"env"`
	// PassEnv names variables of handoff mcp's own environment that a
	// command upstream gets as they are. Nothing else is inherited beyond a
	// small base (PATH, HOME, the locale; see baseEnv): the environment
	// holds Handoff's token, and an upstream is someone else's program.
	PassEnv []string `yaml:"pass_env"`
	URL     string   `yaml:"url"`
	// Pass lists unlisted tools allowed through although their annotations
	// say, or leave it to be assumed, that they are destructive.
	Pass []string `yaml:"pass"`
	// PassTimeout bounds a passed-through (unguarded) call; default 30s.
	PassTimeout string       `yaml:"pass_timeout"`
	Tools       []ToolConfig `yaml:"tools"`

	parsedPassTimeout time.Duration
}

// defaultPassTimeout bounds a passed-through call when the file says nothing.
const defaultPassTimeout = 30 * time.Second

func (u *UpstreamConfig) passTimeout() time.Duration {
	if u.parsedPassTimeout > 0 {
		return u.parsedPassTimeout
	}
	return defaultPassTimeout
}

// ToolConfig is one guarded tool: the operation type it runs as, how its
// business key is made and which arguments are its content.
type ToolConfig struct {
	Name    string      `yaml:"name"`
	Type    string      `yaml:"type"`
	Key     KeyConfig   `yaml:"key"`
	Content []string    `yaml:"content"`
	Timeout string      `yaml:"timeout"` // default: the card's lease
	Errors  []ErrorRule `yaml:"errors"`
	// OnError is the class of an error result no rule matches; unknown by
	// default, which after begin hands the call to a person.
	OnError string `yaml:"on_error"`

	timeout time.Duration
	rules   []compiledRule
}

// KeyConfig makes the business key from a hash of named arguments, or from
// a hash of one idempotency-key argument the agent supplies. Raw values never
// appear in a key: arguments carry personal data.
type KeyConfig struct {
	From     []string `yaml:"from"`
	Argument string   `yaml:"argument"`
}

// ErrorRule maps an upstream error result to an error class: Match is a
// regular expression over the result's text.
type ErrorRule struct {
	Match string `yaml:"match"`
	Class string `yaml:"class"`
}

type compiledRule struct {
	re    *regexp.Regexp
	class string
}

// errorClasses are the wire contract's error classes.
var errorClasses = []string{"transient", "rate_limited", "timeout", "validation", "auth", "permission",
	"not_found", "conflict", "config", "unknown"}

var upstreamName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,39}$`)

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// LoadConfig reads and checks a configuration file; its errors name the
// file, the upstream and tool, and the field.
func LoadConfig(file string) (*Config, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(raw), yaml.DisallowUnknownField())
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%s: %s", file, yaml.FormatError(err, false, true))
	}
	c.file = file
	if err := c.check(); err != nil {
		return nil, err
	}
	return &c, nil
}

// configError names where in the file a problem is.
type configError struct {
	file, where, field, msg string
}

func (e *configError) Error() string {
	return fmt.Sprintf("%s: %s: %s: %s", e.file, e.where, e.field, e.msg)
}

func (c *Config) check() error {
	bad := func(where, field, format string, args ...any) error {
		return &configError{c.file, where, field, fmt.Sprintf(format, args...)}
	}
	if c.Handoff.URL == "" && os.Getenv("HANDOFF_URL") == "" {
		return bad("handoff", "url", "required (or set HANDOFF_URL)")
	}
	if len(c.Upstreams) == 0 {
		return bad("config", "upstreams", "at least one upstream is required")
	}
	seen := map[string]bool{}
	for i, u := range c.Upstreams {
		where := fmt.Sprintf("upstream %d", i+1)
		if u.Name != "" {
			where = fmt.Sprintf("upstream %q", u.Name)
		}
		switch {
		case !upstreamName.MatchString(u.Name):
			return bad(where, "name", "must be 1-40 of a-z 0-9 _ - (it is part of operation keys)")
		case seen[u.Name]:
			return bad(where, "name", "used twice")
		case (len(u.Command) == 0) == (u.URL == ""):
			return bad(where, "command", "give exactly one of command and url")
		case u.URL != "" && !strings.HasPrefix(u.URL, "http://") && !strings.HasPrefix(u.URL, "https://"):
			return bad(where, "url", "must be an http:// or https:// URL")
		case len(u.Env) > 0 && u.URL != "":
			return bad(where, "env", "only for a command")
		case len(u.PassEnv) > 0 && u.URL != "":
			return bad(where, "pass_env", "only for a command")
		}
		for _, name := range u.PassEnv {
			if !envName.MatchString(name) {
				return bad(where, "pass_env", "%q is not an environment variable's name", name)
			}
		}
		for name := range u.Env {
			if !envName.MatchString(name) {
				return bad(where, "env", "%q is not an environment variable's name", name)
			}
		}
		if slices.Contains(u.PassEnv, c.tokenEnv()) || u.Env[c.tokenEnv()] != "" {
			return bad(where, "pass_env", "%s holds Handoff's workflow token; an upstream never gets it", c.tokenEnv())
		}
		if u.PassTimeout != "" {
			d, err := time.ParseDuration(u.PassTimeout)
			if err != nil || d <= 0 {
				return bad(where, "pass_timeout", "%q is not a positive duration such as 20s", u.PassTimeout)
			}
			c.Upstreams[i].parsedPassTimeout = d
		}
		seen[u.Name] = true
		tools := map[string]bool{}
		for _, p := range u.Pass {
			tools[p] = true
		}
		for j := range u.Tools {
			t := &c.Upstreams[i].Tools[j]
			tw := fmt.Sprintf("%s, tool %d", where, j+1)
			if t.Name != "" {
				tw = fmt.Sprintf("%s, tool %q", where, t.Name)
			}
			if t.Name == "" {
				return bad(tw, "name", "required")
			}
			if tools[t.Name] {
				return bad(tw, "name", "listed twice (as a guarded tool or in pass)")
			}
			tools[t.Name] = true
			if err := t.check(); err != nil {
				return bad(tw, err.field, "%s", err.msg)
			}
		}
	}
	return nil
}

type fieldProblem struct{ field, msg string }

func (t *ToolConfig) check() *fieldProblem {
	if t.Type == "" {
		return &fieldProblem{"type", "required: the operation type (card) the call runs as"}
	}
	switch {
	case len(t.Key.From) == 0 && t.Key.Argument == "":
		return &fieldProblem{"key", "give key.from (arguments hashed into the key) or key.argument (an idempotency-key argument)"}
	case len(t.Key.From) > 0 && t.Key.Argument != "":
		return &fieldProblem{"key", "give only one of key.from and key.argument"}
	}
	if len(t.Content) == 0 {
		return &fieldProblem{"content", "name the arguments that form the operation's content"}
	}
	for _, list := range [][]string{t.Key.From, t.Content} {
		for _, a := range list {
			if a == "" {
				return &fieldProblem{"content", "an empty argument name"}
			}
		}
	}
	if t.Timeout != "" {
		d, err := time.ParseDuration(t.Timeout)
		if err != nil || d <= 0 {
			return &fieldProblem{"timeout", fmt.Sprintf("%q is not a positive duration such as 20s", t.Timeout)}
		}
		t.timeout = d
	}
	if t.OnError == "" {
		t.OnError = "unknown"
	}
	if !isClass(t.OnError) {
		return &fieldProblem{"on_error", fmt.Sprintf("%q is not an error class (%s)", t.OnError, strings.Join(errorClasses, ", "))}
	}
	t.rules = nil
	for k, r := range t.Errors {
		field := fmt.Sprintf("errors[%d]", k)
		re, err := regexp.Compile(r.Match)
		if err != nil || r.Match == "" {
			return &fieldProblem{field + ".match", fmt.Sprintf("not a regular expression: %q", r.Match)}
		}
		if !isClass(r.Class) {
			return &fieldProblem{field + ".class", fmt.Sprintf("%q is not an error class (%s)", r.Class, strings.Join(errorClasses, ", "))}
		}
		t.rules = append(t.rules, compiledRule{re, r.Class})
	}
	return nil
}

func isClass(s string) bool { return slices.Contains(errorClasses, s) }

// classify names the error class of an upstream error result's text.
func (t *ToolConfig) classify(text string) string {
	for _, r := range t.rules {
		if r.re.MatchString(text) {
			return r.class
		}
	}
	return t.OnError
}

// url and token resolve the Handoff server from the file and environment.
func (c *Config) url() string {
	if c.Handoff.URL != "" {
		return c.Handoff.URL
	}
	return os.Getenv("HANDOFF_URL")
}

func (c *Config) tokenEnv() string {
	if c.Handoff.TokenEnv != "" {
		return c.Handoff.TokenEnv
	}
	return "HANDOFF_TOKEN"
}

func (c *Config) publicURL() string {
	if c.Handoff.PublicURL != "" {
		return strings.TrimRight(c.Handoff.PublicURL, "/")
	}
	return strings.TrimRight(c.url(), "/")
}

// Token is the workflow token, read from the environment variable the file
// names.
func (c *Config) Token() string { return os.Getenv(c.tokenEnv()) }

// Summary lists what the file configures, one line per upstream and tool.
func (c *Config) Summary() []string {
	var lines []string
	for _, u := range c.Upstreams {
		where := u.URL
		if where == "" {
			where = strings.Join(u.Command, " ")
		}
		lines = append(lines, fmt.Sprintf("ok  upstream %s (%s)", u.Name, where))
		for _, t := range u.Tools {
			lines = append(lines, fmt.Sprintf("ok    %s → %s, key from %s, content %s", t.Name, t.Type, keyArgs(&t), strings.Join(t.Content, ", ")))
		}
		if len(u.Pass) > 0 {
			lines = append(lines, fmt.Sprintf("ok    passed explicitly: %s", strings.Join(u.Pass, ", ")))
		}
	}
	return lines
}
