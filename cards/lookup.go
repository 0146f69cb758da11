package cards

import (
	"fmt"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// lookupAdapterYAML is a card's lookup_adapter as written in a file.
type lookupAdapterYAML struct {
	Request struct {
		Method     string            `yaml:"method"`
		URL        string            `yaml:"url"`
		AuthEnv    string            `yaml:"auth_env"`
		AuthHeader string            `yaml:"auth_header"`
		AuthScheme string            `yaml:"auth_scheme"`
		Headers    map[string]string `yaml:"headers"`
		Timeout    string            `yaml:"timeout"`
	} `yaml:"request"`
	Found struct {
		Status       []int    `yaml:"status"`
		Ref          string   `yaml:"ref"`
		Key          string   `yaml:"key"`
		WhenNonempty string   `yaml:"when_nonempty"`
		State        string   `yaml:"state"`
		DoneStates   []string `yaml:"done_states"`
		Compare      []struct {
			Answer  string `yaml:"answer"`
			Content string `yaml:"content"`
		} `yaml:"compare"`
	} `yaml:"found"`
	NotFound struct {
		Status []int `yaml:"status"`
	} `yaml:"not_found"`
	Window string `yaml:"window"`
}

// toDomain converts the adapter; the method defaults to GET. What the
// adapter means and whether it is valid is decided in domain.
func (y *lookupAdapterYAML) toDomain() (*domain.LookupAdapter, []domain.FieldError) {
	if y == nil {
		return nil, nil
	}
	var errs []domain.FieldError
	dur := func(field, v string) time.Duration {
		if v == "" {
			return 0
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			errs = append(errs, domain.FieldError{Field: "lookup_adapter." + field, Message: fmt.Sprintf("%q is not a duration such as 5s or 2m", v)})
		}
		return d
	}
	a := &domain.LookupAdapter{Method: y.Request.Method, URL: y.Request.URL, AuthEnv: y.Request.AuthEnv,
		AuthHeader: y.Request.AuthHeader, AuthScheme: y.Request.AuthScheme, Headers: y.Request.Headers,
		Timeout: dur("request.timeout", y.Request.Timeout), NotFoundStatus: y.NotFound.Status, Window: dur("window", y.Window),
		Found: domain.LookupFound{Status: y.Found.Status, Ref: y.Found.Ref, Key: y.Found.Key, WhenNonempty: y.Found.WhenNonempty,
			State: y.Found.State, DoneStates: y.Found.DoneStates}}
	if a.Method == "" {
		a.Method = "GET"
	}
	for _, c := range y.Found.Compare {
		a.Found.Compare = append(a.Found.Compare, domain.LookupCompare{Answer: c.Answer, Content: c.Content})
	}
	return a, errs
}
