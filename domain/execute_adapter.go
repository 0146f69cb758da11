package domain

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
)

// ExecuteAdapter is how Handoff makes an operation's provider call by
// itself (the card's execute_adapter): one request built from templates in
// the lookup adapter's language, and the rules that read its answer into
// an outcome. Like the lookup adapter it is declarative: no code runs but
// the templates and the JSON pointers.
type ExecuteAdapter struct {
	Method string // POST (the default), PUT, PATCH or DELETE
	// URL is a template with the lookup adapter's placeholders, escaped
	// for where they stand, and only in the path or the query.
	URL        string
	Headers    map[string]string // fixed headers, no secrets
	AuthEnv    string            // the variable holding the secret; never on the card
	AuthHeader string            // default Authorization
	AuthScheme string            // default Bearer; "none" sends the secret alone
	// KeyHeader carries the provider key; "" is Idempotency-Key and
	// ExecuteNoKeyHeader sends none.
	KeyHeader string
	// Body is how the content goes out: ExecuteBodyContent (the content as
	// JSON), ExecuteBodyForm (its top-level fields, form-encoded) or
	// ExecuteBodyTemplate (Template, filled).
	Body string
	// Template is a JSON value whose strings may hold placeholders: a
	// string that is exactly one ({content}, {content.a}, {provider_key},
	// …) becomes that value with its JSON type, one with text around them
	// has them filled in as text.
	Template json.RawMessage
	Timeout  time.Duration // one request, connect to last byte
	// CompletedStatus and CompletedRef read a success: its statuses and
	// where the provider's reference is (an RFC 6901 JSON pointer).
	CompletedStatus []int
	CompletedRef    string
	// TerminalStatus are the statuses that prove the provider refused the
	// call for good; nil: every 4xx but 408, 409 and 429.
	TerminalStatus []int
	// RetryableStatus are the statuses the provider answers when it did
	// not act and may be asked again; nil: 429, 500, 502, 503, 504.
	RetryableStatus []int
}

// The body kinds of an execute adapter.
const (
	ExecuteBodyContent  = "content"
	ExecuteBodyForm     = "form"
	ExecuteBodyTemplate = "template"
)

// ExecuteNoKeyHeader is the key_header of a provider that takes no key.
const ExecuteNoKeyHeader = "none"

// DefaultExecuteTimeout is an execute adapter's timeout when it names none.
const DefaultExecuteTimeout = 10 * time.Second

// defaultRetryableStatus are the statuses a provider answers when it did
// not act: rate limited or unavailable.
var defaultRetryableStatus = []int{429, 500, 502, 503, 504}

// RequestTimeout is the adapter's timeout, or the default.
func (a ExecuteAdapter) RequestTimeout() time.Duration {
	if a.Timeout > 0 {
		return a.Timeout
	}
	return DefaultExecuteTimeout
}

// ProviderKeyHeader is the header carrying the provider key, "" for none.
func (a ExecuteAdapter) ProviderKeyHeader() string {
	switch a.KeyHeader {
	case "":
		return "Idempotency-Key"
	case ExecuteNoKeyHeader:
		return ""
	}
	return a.KeyHeader
}

// AuthHeaderAndScheme is the header carrying the secret, and the scheme
// before it, with the lookup adapter's defaults.
func (a ExecuteAdapter) AuthHeaderAndScheme() (string, string) {
	return LookupAdapter{AuthHeader: a.AuthHeader, AuthScheme: a.AuthScheme}.AuthHeaderAndScheme()
}

// ExecuteReading is what an answer's status says, before its body is read.
type ExecuteReading int

// The readings of a status.
const (
	// ReadUnknown: a status the card does not name: the provider may
	// have acted, so the outcome is unknown.
	ReadUnknown ExecuteReading = iota
	ReadCompleted
	ReadTerminal
	ReadRetryable
)

// ReadStatus sorts an answer's status by the card's lists.
func (a ExecuteAdapter) ReadStatus(status int) ExecuteReading {
	retryable := a.RetryableStatus
	if retryable == nil {
		retryable = defaultRetryableStatus
	}
	switch {
	case slices.Contains(a.CompletedStatus, status):
		return ReadCompleted
	case slices.Contains(retryable, status):
		return ReadRetryable
	case a.TerminalStatus != nil && slices.Contains(a.TerminalStatus, status):
		return ReadTerminal
	case a.TerminalStatus == nil && status >= 400 && status < 500 && status != 408 && status != 409 && status != 429:
		return ReadTerminal
	}
	return ReadUnknown
}

// StatusClass is the error class an answer's status is settled with: the
// class the card's retryable and terminal lists speak of.
func StatusClass(status int) ErrorClass {
	switch {
	case status == 429:
		return ClassRateLimited
	case status == 401:
		return ClassAuth
	case status == 403:
		return ClassPermission
	case status == 404:
		return ClassNotFound
	case status == 409:
		return ClassConflict
	case status == 408 || status >= 500:
		return ClassTransient
	case status >= 400:
		return ClassValidation
	}
	return ClassUnknown
}

// ExecuteRequestURL fills the adapter's URL template for op.
func (a ExecuteAdapter) ExecuteRequestURL(op Operation) (string, error) {
	return fillRequestURL(a.URL, op, false)
}

// ExecuteEvidenceURL is the request's URL as the timeline records it: the
// content placeholders kept, since content can be personal data.
func (a ExecuteAdapter) ExecuteEvidenceURL(op Operation) string {
	u, _ := fillRequestURL(a.URL, op, true)
	return u
}

// ExecuteRequestBody is the request's body for op and its media type.
func (a ExecuteAdapter) ExecuteRequestBody(op Operation) ([]byte, string, error) {
	switch a.Body {
	case ExecuteBodyForm:
		var fields map[string]any
		dec := json.NewDecoder(strings.NewReader(string(op.Content)))
		dec.UseNumber()
		if err := dec.Decode(&fields); err != nil {
			return nil, "", fmt.Errorf("the content is not a JSON object")
		}
		form := url.Values{}
		for k, v := range fields {
			s, ok := scalarText(v)
			if !ok {
				return nil, "", fmt.Errorf("the content field %s is not a string, number or boolean: a form cannot carry it", k)
			}
			form.Set(k, s)
		}
		return []byte(form.Encode()), "application/x-www-form-urlencoded", nil
	case ExecuteBodyTemplate:
		var tmpl any
		if err := json.Unmarshal(a.Template, &tmpl); err != nil {
			return nil, "", fmt.Errorf("the template is not JSON")
		}
		v, err := fillTemplate(tmpl, op)
		if err != nil {
			return nil, "", err
		}
		b, err := json.Marshal(v)
		return b, "application/json", err
	}
	if len(op.Content) == 0 {
		return []byte("{}"), "application/json", nil
	}
	return op.Content, "application/json", nil
}

// fillTemplate replaces the placeholders in a template's strings.
func fillTemplate(v any, op Operation) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			f, err := fillTemplate(e, op)
			if err != nil {
				return nil, err
			}
			out[k] = f
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			f, err := fillTemplate(e, op)
			if err != nil {
				return nil, err
			}
			out[i] = f
		}
		return out, nil
	case string:
		if m := lookupVarRE.FindStringSubmatch(x); m != nil && m[0] == x {
			return templateValue(op, m[1])
		}
		var firstErr error
		s := lookupVarRE.ReplaceAllStringFunc(x, func(m string) string {
			val, err := templateValue(op, m[1:len(m)-1])
			if err != nil {
				firstErr = err
				return ""
			}
			if t, ok := scalarText(val); ok {
				return t
			}
			b, _ := json.Marshal(val)
			return string(b)
		})
		return s, firstErr
	}
	return v, nil
}

// templateValue is a placeholder's value with its JSON type: {content} is
// the whole content, {content.a.b} one field, the keys are strings.
func templateValue(op Operation, name string) (any, error) {
	switch name {
	case "provider_key", "key", "event_id":
		s, err := lookupValue(op, name)
		return s, err
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(string(op.Content)))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("the content is not readable for {%s}", name)
	}
	if name == "content" {
		return v, nil
	}
	for _, part := range strings.Split(strings.TrimPrefix(name, "content."), ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("the content has no field %s for {%s}", strings.TrimPrefix(name, "content."), name)
		}
		if v, ok = m[part]; !ok {
			return nil, fmt.Errorf("the content has no field %s for {%s}", strings.TrimPrefix(name, "content."), name)
		}
	}
	return v, nil
}

func scalarText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	case bool:
		if x {
			return "true", true
		}
		return "false", true
	}
	return "", false
}

// validate lists the adapter's problems, fields named as in the YAML.
func (a ExecuteAdapter) validate(c Card) []FieldError {
	var errs []FieldError
	bad := func(field, format string, args ...any) {
		errs = append(errs, FieldError{Field: "execute_adapter." + field, Message: fmt.Sprintf(format, args...)})
	}
	switch a.Method {
	case "POST", "PUT", "PATCH", "DELETE":
	default:
		bad("request.method", "must be POST, PUT, PATCH or DELETE")
	}
	for _, msg := range requestURLErrors(a.URL) {
		bad("request.url", "%s", msg)
	}
	if a.AuthEnv != "" && !envNameRE.MatchString(a.AuthEnv) {
		bad("request.auth_env", "must name an environment variable")
	}
	if a.AuthHeader != "" && !headerNameRE.MatchString(a.AuthHeader) {
		bad("request.auth_header", "must be a header name")
	}
	if a.KeyHeader != "" && a.KeyHeader != ExecuteNoKeyHeader && !headerNameRE.MatchString(a.KeyHeader) {
		bad("request.key_header", "must be a header name, or none")
	}
	authHeader, _ := a.AuthHeaderAndScheme()
	for name, v := range a.Headers {
		if !headerNameRE.MatchString(name) || strings.ContainsAny(v, "\r\n") {
			bad("request.headers", "%q must be a header name with a one-line value", name)
		}
		if strings.EqualFold(name, authHeader) {
			bad("request.headers", "%s is set from auth_env: a secret is never written on the card", name)
		}
		if kh := a.ProviderKeyHeader(); kh != "" && strings.EqualFold(name, kh) {
			bad("request.headers", "%s carries the provider key (key_header); it is not a fixed header", name)
		}
	}
	switch a.Body {
	case ExecuteBodyContent, ExecuteBodyForm:
		if len(a.Template) > 0 {
			bad("request.template", "is only read with body: template")
		}
	case ExecuteBodyTemplate:
		var v any
		if len(a.Template) == 0 || json.Unmarshal(a.Template, &v) != nil {
			bad("request.template", "is required with body: template: the JSON body, its strings holding placeholders")
		} else {
			for _, name := range templatePlaceholders(v) {
				if name != "content" && name != "provider_key" && name != "key" && name != "event_id" && !lookupContentRE.MatchString(name) {
					bad("request.template", "{%s} is not {content}, {content.field}, {provider_key}, {key} or {event_id}", name)
				}
			}
		}
	default:
		bad("request.body", "must be content, form or template")
	}
	if a.Timeout < 0 || a.Timeout > time.Minute {
		bad("request.timeout", "must be between 0 (10s) and 1m")
	}
	if c.Lease > 0 && a.RequestTimeout()+5*time.Second > c.Lease {
		bad("request.timeout", "must end at least 5s inside the card's lease (%s): a call still running when the lease lapses "+
			"would be handed to the lookup while it may yet land", c.Lease)
	}
	if len(a.CompletedStatus) == 0 {
		bad("completed.status", "must list at least one status")
	}
	lists := map[string][]int{"completed.status": a.CompletedStatus, "failed_terminal.status": a.TerminalStatus,
		"failed_retryable.status": a.RetryableStatus}
	seen := map[int]string{}
	for _, field := range []string{"completed.status", "failed_terminal.status", "failed_retryable.status"} {
		for _, s := range lists[field] {
			if s < 100 || s > 599 {
				bad(field, "%d is not an HTTP status", s)
			} else if other, dup := seen[s]; dup {
				bad(field, "%d is also listed in %s", s, other)
			}
			seen[s] = field
		}
	}
	for _, s := range a.CompletedStatus {
		if s >= 300 {
			bad("completed.status", "%d is not a success: a completed call answers 1xx or 2xx", s)
		}
	}
	if a.CompletedRef == "" {
		bad("completed.ref", "is required: a completed call must name the provider's reference")
	} else if !validPointer(a.CompletedRef) {
		bad("completed.ref", "%q is not a JSON pointer (RFC 6901) such as /id", a.CompletedRef)
	}
	slices.SortFunc(errs, func(x, y FieldError) int { return strings.Compare(x.Field, y.Field) })
	return errs
}

// templatePlaceholders lists the placeholders in a template's strings.
func templatePlaceholders(v any) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			out = append(out, templatePlaceholders(e)...)
		}
	case []any:
		for _, e := range x {
			out = append(out, templatePlaceholders(e)...)
		}
	case string:
		for _, m := range lookupVarRE.FindAllStringSubmatch(x, -1) {
			out = append(out, m[1])
		}
	}
	return out
}
