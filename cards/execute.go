package cards

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// executeAdapterYAML is a card's execute_adapter as written in a file.
type executeAdapterYAML struct {
	Request struct {
		Method     string            `yaml:"method"`
		URL        string            `yaml:"url"`
		Headers    map[string]string `yaml:"headers"`
		AuthEnv    string            `yaml:"auth_env"`
		AuthHeader string            `yaml:"auth_header"`
		AuthScheme string            `yaml:"auth_scheme"`
		KeyHeader  string            `yaml:"key_header"`
		Body       string            `yaml:"body"`
		Template   any               `yaml:"template"`
		Timeout    string            `yaml:"timeout"`
	} `yaml:"request"`
	Completed struct {
		Status []int  `yaml:"status"`
		Ref    string `yaml:"ref"`
	} `yaml:"completed"`
	FailedTerminal struct {
		Status []int `yaml:"status"`
	} `yaml:"failed_terminal"`
	FailedRetryable struct {
		Status []int `yaml:"status"`
	} `yaml:"failed_retryable"`
}

// executeEndpointYAML is a card's execute_endpoint as written in a file.
type executeEndpointYAML struct {
	Key       string `yaml:"key"`
	Content   string `yaml:"content"`
	Wait      string `yaml:"wait"`
	Signature *struct {
		Header    string `yaml:"header"`
		Encoding  string `yaml:"encoding"`
		SecretEnv string `yaml:"secret_env"`
		Namespace string `yaml:"namespace"`
		Name      string `yaml:"name"`
	} `yaml:"signature"`
}

func parseDuration(errs *[]domain.FieldError, field, v string) time.Duration {
	if v == "" {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		*errs = append(*errs, domain.FieldError{Field: field, Message: fmt.Sprintf("%q is not a duration such as 5s or 2m", v)})
	}
	return d
}

// toDomain converts the adapter; method and body default to POST and
// content. What the adapter means and whether it is valid is decided in
// domain.
func (y *executeAdapterYAML) toDomain() (*domain.ExecuteAdapter, []domain.FieldError) {
	if y == nil {
		return nil, nil
	}
	var errs []domain.FieldError
	r := y.Request
	a := &domain.ExecuteAdapter{Method: r.Method, URL: r.URL, Headers: r.Headers, AuthEnv: r.AuthEnv,
		AuthHeader: r.AuthHeader, AuthScheme: r.AuthScheme, KeyHeader: r.KeyHeader, Body: r.Body,
		Timeout:         parseDuration(&errs, "execute_adapter.request.timeout", r.Timeout),
		CompletedStatus: y.Completed.Status, CompletedRef: y.Completed.Ref,
		TerminalStatus: y.FailedTerminal.Status, RetryableStatus: y.FailedRetryable.Status}
	if a.Method == "" {
		a.Method = "POST"
	}
	if a.Body == "" {
		a.Body = domain.ExecuteBodyContent
	}
	if r.Template != nil {
		b, err := json.Marshal(jsonable(r.Template))
		if err != nil {
			errs = append(errs, domain.FieldError{Field: "execute_adapter.request.template", Message: "is not a JSON value"})
		}
		a.Template = b
	}
	return a, errs
}

// jsonable turns YAML's maps with any keys into JSON's string-keyed ones.
func jsonable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = jsonable(e)
		}
		return x
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = jsonable(e)
		}
		return out
	case []any:
		for i, e := range x {
			x[i] = jsonable(e)
		}
	}
	return v
}

func (y *executeEndpointYAML) toDomain() (*domain.ExecuteEndpoint, []domain.FieldError) {
	if y == nil {
		return nil, nil
	}
	var errs []domain.FieldError
	e := &domain.ExecuteEndpoint{KeyPointer: y.Key, ContentPointer: y.Content,
		Wait: parseDuration(&errs, "execute_endpoint.wait", y.Wait)}
	if s := y.Signature; s != nil {
		e.Signature = &domain.ExecuteSignature{Header: s.Header, Encoding: s.Encoding, SecretEnv: s.SecretEnv,
			Namespace: s.Namespace, Name: s.Name}
	}
	return e, errs
}
