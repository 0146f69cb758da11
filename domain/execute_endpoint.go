package domain

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// ExecuteEndpoint is how POST /v1/execute/{type} reads a request for tools
// that cannot set a header or a bearer token (the card's
// execute_endpoint): the business key and the content from parts of the
// JSON body, and a signature of the body in place of a token.
type ExecuteEndpoint struct {
	// KeyPointer is the JSON pointer of the business key in the body; ""
	// reads the Idempotency-Key header.
	KeyPointer string
	// ContentPointer is the JSON pointer of the content in the body; ""
	// is the whole body.
	ContentPointer string
	// Signature, if set, replaces the bearer token.
	Signature *ExecuteSignature
	// Wait bounds how long a synchronous request waits for the outcome
	// before it is answered 202; 0 is DefaultExecuteWait.
	Wait time.Duration
}

// ExecuteSignature is a request signature: Header holds the HMAC-SHA256 of
// the raw body under the secret in SecretEnv, base64 or hex. Requests so
// signed act as a workflow named Name in Namespace.
type ExecuteSignature struct {
	Header    string
	Encoding  string // base64 (the default) or hex
	SecretEnv string
	Namespace string
	Name      string
}

// DefaultExecuteWait is how long a synchronous execute request waits.
const DefaultExecuteWait = 25 * time.Second

// WaitOrDefault is the endpoint's wait, or the default.
func (e *ExecuteEndpoint) WaitOrDefault() time.Duration {
	if e != nil && e.Wait > 0 {
		return e.Wait
	}
	return DefaultExecuteWait
}

// Verify reports whether sig is the signature of body under secret. An
// empty secret verifies nothing.
func (s ExecuteSignature) Verify(body []byte, secret, sig string) bool {
	if secret == "" || sig == "" {
		return false
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	sum := mac.Sum(nil)
	var got []byte
	var err error
	if s.Encoding == "hex" {
		got, err = hex.DecodeString(strings.TrimSpace(sig))
	} else {
		got, err = base64.StdEncoding.DecodeString(strings.TrimSpace(sig))
	}
	return err == nil && hmac.Equal(got, sum)
}

// Actor is who a signed request acts as.
func (s ExecuteSignature) Actor() Actor {
	name := s.Name
	if name == "" {
		name = "signed-request"
	}
	return Actor{Kind: ActorWorkflow, Name: name, Namespace: s.Namespace}
}

// ExecuteInput is what a request to the endpoint carries: the key and the
// content, read by the card's rules.
type ExecuteInput struct {
	Key     string
	Content json.RawMessage
}

// ReadExecuteRequest reads the key and the content from a request's body
// (and its Idempotency-Key header), as the card's endpoint says.
func (e *ExecuteEndpoint) ReadExecuteRequest(body []byte, keyHeader string) (ExecuteInput, error) {
	var doc any
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil || dec.More() {
		return ExecuteInput{}, Errorf(EInvalidJSON, "the body is not one JSON value")
	}
	in := ExecuteInput{Key: keyHeader, Content: body}
	if e != nil && e.KeyPointer != "" {
		v, ok := jsonPointer(doc, e.KeyPointer)
		k, isText := scalarText(v)
		if !ok || !isText || k == "" {
			return ExecuteInput{}, Invalid(FieldError{Field: e.KeyPointer, Message: "must hold the operation's key (a string or a number)"})
		}
		in.Key = k
	}
	if e != nil && e.ContentPointer != "" {
		v, ok := jsonPointer(doc, e.ContentPointer)
		if _, isObject := v.(map[string]any); !ok || !isObject {
			return ExecuteInput{}, Invalid(FieldError{Field: e.ContentPointer, Message: "must hold the content, a JSON object"})
		}
		b, err := json.Marshal(v)
		if err != nil {
			return ExecuteInput{}, Invalid(FieldError{Field: e.ContentPointer, Message: "is not readable"})
		}
		in.Content = b
	}
	if in.Key == "" {
		return ExecuteInput{}, Invalid(FieldError{Field: "Idempotency-Key", Message: "the header must carry the operation's key"})
	}
	return in, nil
}

// jsonPointer resolves an RFC 6901 pointer in a decoded document.
func jsonPointer(doc any, p string) (any, bool) {
	if p == "" {
		return doc, true
	}
	cur := doc
	for _, tok := range strings.Split(p[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[tok]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// validate lists the endpoint's problems, fields named as in the YAML.
func (e ExecuteEndpoint) validate(c Card) []FieldError {
	var errs []FieldError
	bad := func(field, format string, args ...any) {
		errs = append(errs, FieldError{Field: strings.TrimSuffix("execute_endpoint."+field, "."), Message: fmt.Sprintf(format, args...)})
	}
	if c.ExecuteAdapter == nil {
		bad("", "needs an execute_adapter: the endpoint runs it")
	}
	if e.KeyPointer != "" && (!validPointer(e.KeyPointer)) {
		bad("key", "%q is not a JSON pointer (RFC 6901) such as /action_run_id", e.KeyPointer)
	}
	if e.ContentPointer != "" && !validPointer(e.ContentPointer) {
		bad("content", "%q is not a JSON pointer (RFC 6901) such as /properties", e.ContentPointer)
	}
	if e.Wait < 0 || e.Wait > time.Minute {
		bad("wait", "must be between 0 (25s) and 1m")
	}
	if s := e.Signature; s != nil {
		if !headerNameRE.MatchString(s.Header) {
			bad("signature.header", "must be a header name, such as X-Shopify-Hmac-SHA256")
		}
		if s.Encoding != "" && s.Encoding != "base64" && s.Encoding != "hex" {
			bad("signature.encoding", "must be base64 or hex")
		}
		if !envNameRE.MatchString(s.SecretEnv) {
			bad("signature.secret_env", "must name the environment variable holding the secret")
		}
		if s.Namespace == "" {
			bad("signature.namespace", "is required: a signed request has no token to name its namespace")
		}
		if s.Name != "" && !cardNameRE.MatchString(s.Name) {
			bad("signature.name", "must be 1-100 characters of a-z 0-9 . _ -")
		}
	}
	return errs
}

// validateExecute lists the problems of the card's execute lines.
func validateExecute(c Card) []FieldError {
	var errs []FieldError
	if c.ExecuteAdapter != nil {
		errs = append(errs, c.ExecuteAdapter.validate(c)...)
	}
	if c.ExecuteEndpoint != nil {
		errs = append(errs, c.ExecuteEndpoint.validate(c)...)
	}
	return errs
}

// ExecuteTypes are the types whose card has an execute_adapter.
func (cs Cards) ExecuteTypes() []string {
	var out []string
	for _, c := range cs.Sorted() {
		if c.ExecuteAdapter != nil {
			out = append(out, c.Name)
		}
	}
	return out
}

// ExecuteRun is what a request to the execute endpoint started: the
// operation as registered, and Done, closed once the call this request
// started has settled; Done is nil when none was started, and Refused then
// says why (it is done, another request runs it, a retry is scheduled, a
// person decides).
type ExecuteRun struct {
	Operation Operation
	Created   bool
	Done      <-chan struct{}
	Refused   *Error
}
