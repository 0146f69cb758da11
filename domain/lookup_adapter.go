package domain

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// LookupAdapter is how Handoff looks an operation up at its provider by
// itself (the card's lookup_adapter): one read request built from a URL
// template, and the rules that read its answer. It is declarative: no code
// runs but the template and the JSON pointers.
type LookupAdapter struct {
	Method string // GET or HEAD: a lookup only reads
	// URL is a template: {provider_key}, {key}, {event_id} and
	// {content.a.b} are replaced, each escaped for where it stands (a path
	// segment or a query value); Validate keeps them out of the scheme,
	// host, port and fragment.
	URL string
	// AuthEnv names the environment variable holding the secret sent in
	// AuthHeader (default Authorization) after AuthScheme (default Bearer;
	// "none" sends the secret alone). The secret is never on the card.
	AuthEnv    string
	AuthHeader string
	AuthScheme string
	Headers    map[string]string // fixed headers, no secrets
	Timeout    time.Duration     // one request, connect to last byte
	Found      LookupFound
	// NotFoundStatus are the statuses that mean "no record under this key";
	// only a card with lookup_authoritative lets them lead to a retry.
	NotFoundStatus []int
	// Window is how long Handoff keeps looking before it concludes: for a
	// provider whose index lags behind its writes. Zero: one look.
	Window time.Duration
}

// LookupFound reads a found answer: its status, where the provider's
// reference is (an RFC 6901 JSON pointer), what must be non-empty for the
// answer to count as found (a search answers 200 with an empty list), the
// record's state and which states mean the side effect is done, and the
// fields to compare with the content that was sent.
//
// A found record completes an operation only when it is bound to it: Key
// names where the record holds the provider key, or Compare has at least
// one rule; an adapter with neither is refused, since any record the
// provider answers with would then complete the operation.
type LookupFound struct {
	Status       []int
	Ref          string
	Key          string // JSON pointer to the provider key in the record
	WhenNonempty string
	State        string
	DoneStates   []string
	Compare      []LookupCompare
}

// Binds reports whether the rules bind a found record to the operation
// looked up: by its provider key in the record, or by a compare rule.
func (f LookupFound) Binds() bool { return f.Key != "" || len(f.Compare) > 0 }

// LookupCompare pairs a field of the provider's record with the content
// field it must equal: a record under the key with other content is
// evidence of a conflict, never a match.
type LookupCompare struct {
	Answer  string // JSON pointer into the answer
	Content string // JSON pointer into the operation's content; "" is all of it
}

// The defaults of an adapter's request.
const (
	DefaultLookupTimeout = 10 * time.Second
	lookupAuthHeader     = "Authorization"
	lookupAuthScheme     = "Bearer"
)

// Header is the header carrying the secret, and the scheme before it.
func (a LookupAdapter) AuthHeaderAndScheme() (string, string) {
	h, s := a.AuthHeader, a.AuthScheme
	if h == "" {
		h = lookupAuthHeader
	}
	switch s {
	case "":
		s = lookupAuthScheme
	case "none":
		s = ""
	}
	return h, s
}

// RequestTimeout is the adapter's timeout, or the default.
func (a LookupAdapter) RequestTimeout() time.Duration {
	if a.Timeout > 0 {
		return a.Timeout
	}
	return DefaultLookupTimeout
}

var (
	lookupVarRE     = regexp.MustCompile(`\{([^{}]*)\}`)
	lookupContentRE = regexp.MustCompile(`^content(\.[A-Za-z0-9_-]+)+$`)
	headerNameRE    = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
)

// validate lists the adapter's problems, fields named as in the YAML.
func (a LookupAdapter) validate(c Card) []FieldError {
	var errs []FieldError
	bad := func(field, format string, args ...any) {
		errs = append(errs, FieldError{Field: "lookup_adapter." + field, Message: fmt.Sprintf(format, args...)})
	}
	if a.Method != "GET" && a.Method != "HEAD" {
		bad("request.method", "must be GET or HEAD: a lookup only reads")
	}
	msgs := requestURLErrors(a.URL)
	for _, msg := range msgs {
		bad("request.url", "%s", msg)
	}
	if len(msgs) == 0 && !strings.Contains(a.URL, "{") {
		bad("request.url", "must name the record: use {provider_key}, {key}, {event_id} or {content.field}")
	}
	if a.AuthEnv != "" && !envNameRE.MatchString(a.AuthEnv) {
		bad("request.auth_env", "must name an environment variable")
	}
	if a.AuthHeader != "" && !headerNameRE.MatchString(a.AuthHeader) {
		bad("request.auth_header", "must be a header name")
	}
	for name, v := range a.Headers {
		if !headerNameRE.MatchString(name) || strings.ContainsAny(v, "\r\n") {
			bad("request.headers", "%q must be a header name with a one-line value", name)
		}
		if strings.EqualFold(name, lookupAuthHeader) || (a.AuthHeader != "" && strings.EqualFold(name, a.AuthHeader)) {
			bad("request.headers", "%s is set from auth_env: a secret is never written on the card", name)
		}
	}
	if a.Timeout < 0 || a.Timeout > time.Minute {
		bad("request.timeout", "must be between 0 (10s) and 1m")
	}
	if len(a.Found.Status) == 0 {
		bad("found.status", "must list at least one status")
	}
	for _, s := range append(slices.Clone(a.Found.Status), a.NotFoundStatus...) {
		if s < 100 || s > 599 {
			bad("found.status", "%d is not an HTTP status", s)
		}
	}
	for _, s := range a.NotFoundStatus {
		if slices.Contains(a.Found.Status, s) {
			bad("not_found.status", "%d is also a found status", s)
		}
	}
	pointers := map[string]string{"found.ref": a.Found.Ref, "found.when_nonempty": a.Found.WhenNonempty, "found.state": a.Found.State,
		"found.key": a.Found.Key}
	for i, cmp := range a.Found.Compare {
		pointers[fmt.Sprintf("found.compare[%d].answer", i)] = cmp.Answer
		pointers[fmt.Sprintf("found.compare[%d].content", i)] = cmp.Content
		if cmp.Answer == "" {
			bad(fmt.Sprintf("found.compare[%d].answer", i), "is required (the content pointer may be empty: the whole content)")
		}
	}
	for field, p := range pointers {
		if p != "" && !validPointer(p) {
			bad(field, "%q is not a JSON pointer (RFC 6901) such as /data/0/id", p)
		}
	}
	if a.Found.Ref == "" {
		bad("found.ref", "is required: a found record must name the provider's reference")
	}
	if !a.Found.Binds() {
		bad("found", "must bind a found record to this operation: name found.key (where the record holds the provider key) "+
			"or at least one found.compare rule; otherwise any record the provider answers with would complete the operation")
	}
	if len(a.Found.DoneStates) > 0 && a.Found.State == "" {
		bad("found.done_states", "needs found.state")
	}
	if a.Window < 0 || a.Window > 24*time.Hour {
		bad("window", "must be between 0 and 24h")
	}
	if c.Lookup == LookupNone {
		errs = append(errs, FieldError{Field: "lookup", Message: "must be api when the card has a lookup_adapter"})
	}
	slices.SortFunc(errs, func(x, y FieldError) int { return strings.Compare(x.Field, y.Field) })
	return errs
}

// validPointer reports whether p is an RFC 6901 pointer: "" or "/"-led
// tokens whose "~" is always "~0" or "~1".
func validPointer(p string) bool {
	if p == "" {
		return true
	}
	if p[0] != '/' {
		return false
	}
	for i := 0; i < len(p); i++ {
		if p[i] == '~' && (i+1 >= len(p) || (p[i+1] != '0' && p[i+1] != '1')) {
			return false
		}
	}
	return true
}

// LookupRequestURL fills the adapter's URL template for op, each value
// escaped for where it stands: a path segment before the query, a query
// value after it. A content field missing or not a string, number or
// boolean is an error: the request cannot be made. So is a value that
// leaves a path segment empty, "." or ".." (it would walk the URL path to
// another resource, with the adapter's secret), and an empty value in the
// query (it names no record).
func (a LookupAdapter) LookupRequestURL(op Operation) (string, error) { return a.fillURL(op, false) }

// LookupEvidenceURL is the request's URL as evidence records it: the keys
// filled in, each content field left as its placeholder, since content can
// be personal data that only some readers may see.
func (a LookupAdapter) LookupEvidenceURL(op Operation) string {
	u, _ := a.fillURL(op, true)
	return u
}

func (a LookupAdapter) fillURL(op Operation, keepContent bool) (string, error) {
	return fillRequestURL(a.URL, op, keepContent)
}

// requestURLErrors lists what is wrong with a request URL template, the
// lookup's and the execute adapter's alike: placeholders only from the
// known set, and only in the path or the query, where a value cannot
// choose where the request goes.
func requestURLErrors(tmpl string) []string {
	var out []string
	for _, m := range lookupVarRE.FindAllStringSubmatch(tmpl, -1) {
		if v := m[1]; v != "provider_key" && v != "key" && v != "event_id" && !lookupContentRE.MatchString(v) {
			out = append(out, fmt.Sprintf("{%s} is not {provider_key}, {key}, {event_id} or {content.field}", v))
		}
	}
	u, err := url.Parse(lookupVarRE.ReplaceAllString(tmpl, "x"))
	switch {
	case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil:
		out = append(out, "must be an http(s) URL without user info")
	case strings.Contains(lookupAuthority(tmpl), "{"):
		out = append(out, "may use placeholders only in the path or the query, not in the scheme, host or port: "+
			"there an operation's key could choose where the request goes")
	case strings.Contains(fragment(tmpl), "{"):
		out = append(out, "may use placeholders only in the path or the query, not in the fragment")
	}
	return out
}

// fillRequestURL fills a request URL template for op, each value escaped
// for where it stands: a path segment before the query, a query value
// after it. A value that makes a path segment empty, "." or ".." is
// refused (escaping leaves dots as they are, and a client or a proxy would
// resolve them into another path), and so is an empty query value. keepContent leaves each content
// placeholder as it is (the URL as evidence records it).
func fillRequestURL(tmpl string, op Operation, keepContent bool) (string, error) {
	path, query, hasQuery := strings.Cut(tmpl, "?")
	var firstErr error
	fail := func(err error) {
		if firstErr == nil {
			firstErr = err
		}
	}
	fill := func(s string, escape func(string) string, inQuery bool) string {
		return lookupVarRE.ReplaceAllStringFunc(s, func(m string) string {
			name := m[1 : len(m)-1]
			if keepContent && strings.HasPrefix(name, "content.") {
				return m
			}
			v, err := lookupValue(op, name)
			if err != nil {
				fail(err)
			} else if v == "" && inQuery {
				fail(fmt.Errorf("{%s} is empty: a lookup by an empty value names no record", name))
			}
			return escape(v)
		})
	}
	segments := strings.Split(path, "/")
	for i, seg := range segments {
		if !strings.Contains(seg, "{") {
			continue
		}
		filled := fill(seg, url.PathEscape, false)
		if !keepContent && (filled == "" || filled == "." || filled == "..") {
			fail(fmt.Errorf("the value of %s makes the path segment %q: refused, it would walk the URL path to another resource", seg, filled))
		}
		segments[i] = filled
	}
	out := strings.Join(segments, "/")
	if hasQuery {
		out += "?" + fill(query, url.QueryEscape, true)
	}
	return out, firstErr
}

func lookupValue(op Operation, name string) (string, error) {
	switch name {
	case "provider_key":
		return op.ProviderKey, nil
	case "key":
		return op.Key, nil
	case "event_id":
		if op.EventID == "" {
			return "", fmt.Errorf("the operation has no event_id for {event_id}")
		}
		return op.EventID, nil
	}
	field := strings.TrimPrefix(name, "content.")
	var v any
	dec := json.NewDecoder(strings.NewReader(string(op.Content)))
	dec.UseNumber() // an ID of 20 digits stays itself
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("the content is not readable for {%s}", name)
	}
	for _, part := range strings.Split(field, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return "", fmt.Errorf("the content has no field %s for {%s}", field, name)
		}
		if v, ok = m[part]; !ok {
			return "", fmt.Errorf("the content has no field %s for {%s}", field, name)
		}
	}
	switch x := v.(type) {
	case string:
		return x, nil
	case json.Number:
		return x.String(), nil
	case bool:
		return strconv.FormatBool(x), nil
	}
	return "", fmt.Errorf("the content field %s for {%s} is not a string, number or boolean", field, name)
}
