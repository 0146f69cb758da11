// Package client is the Go client for workflows. It speaks Handoff's wire
// contract only (nothing of the server's packages), and Do runs the whole
// protocol around one side effect: register and claim, begin, call, settle.
//
// Do's answer says whether it was a replay (Operation.Replayed: the key had
// completed before and fn was not called). A fn that returned is settled
// completed: a Result without a Ref gets the ref DerivedRef gives, the one
// the Python and TypeScript clients derive from the same answer. A fn that
// stopped before it could have called the provider returns ErrNotSent
// (wrapped) and the lease is released at once. What changed between
// releases is in CHANGELOG.md beside this file.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Client calls one Handoff server with one workflow token.
type Client struct {
	BaseURL string
	Token   string
	HTTP    *http.Client
}

// New returns a client for the server at baseURL.
func New(baseURL, token string) *Client {
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), Token: token, HTTP: &http.Client{Timeout: 30 * time.Second}}
}

// Operation is the server's operation, as far as a workflow needs it.
type Operation struct {
	ID          string     `json:"id"`
	Key         string     `json:"key"`
	Type        string     `json:"type"`
	State       string     `json:"state"`
	Version     int64      `json:"version"`
	ProviderKey string     `json:"provider_key"`
	Attempts    int        `json:"attempts"`
	NextRetryAt *time.Time `json:"next_retry_at"`
	Result      *Result    `json:"result"`
	// Approval is who approved which content version, once someone did.
	Approval *struct {
		ContentVersion int       `json:"content_version"`
		By             string    `json:"by"`
		At             time.Time `json:"at"`
	} `json:"approval"`
	ContentVersion int `json:"content_version"`
	// Lease is who holds the operation and until when, while someone does.
	Lease *struct {
		Worker    string    `json:"worker"`
		ExpiresAt time.Time `json:"expires_at"`
	} `json:"lease"`
	Links struct {
		Desk string `json:"desk"` // the desk's page for the operation, a path on the server
	} `json:"links"`
	LastError *struct {
		Class   string `json:"class"`
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"last_error"`

	// Replayed is set by Do when the key had completed before: the stored
	// result is returned and fn was not called (the Python and TypeScript
	// clients' replayed).
	Replayed bool `json:"-"`
}

// Result is the provider's record of the side effect.
type Result struct {
	Ref  string          `json:"ref"`
	Data json.RawMessage `json:"data,omitempty"`
}

// Claim is what the claiming worker gets.
type Claim struct {
	Lease struct {
		Token     int64     `json:"token"`
		Worker    string    `json:"worker"`
		ExpiresAt time.Time `json:"expires_at"`
	} `json:"lease"`
	Attempt struct {
		ID     string `json:"id"`
		Number int    `json:"number"`
	} `json:"attempt"`
	Content       json.RawMessage `json:"content"`
	ContentSHA256 string          `json:"content_sha256"`
	ProviderKey   string          `json:"provider_key"`
}

// Problem is an RFC 9457 error answer.
type Problem struct {
	Status    int             `json:"status"`
	Code      string          `json:"code"`
	Title     string          `json:"title"`
	Detail    string          `json:"detail"`
	Reason    string          `json:"reason"`
	Operation *Operation      `json:"operation"`
	Errors    json.RawMessage `json:"errors"`
}

func (p *Problem) Error() string {
	if p.Reason != "" {
		return fmt.Sprintf("handoff: %d %s (%s): %s", p.Status, p.Code, p.Reason, p.Detail)
	}
	return fmt.Sprintf("handoff: %d %s: %s", p.Status, p.Code, p.Detail)
}

// call sends a JSON request and decodes a JSON answer into out; an error
// answer becomes a *Problem.
func (c *Client) call(ctx context.Context, method, path string, in, out any) (*http.Response, error) {
	var body io.Reader
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(raw)
	}
	ctx, span := tracer.Start(ctx, method+" "+routeOf(path), trace.WithSpanKind(trace.SpanKindClient))
	defer span.End()
	req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+path, body)
	if err != nil {
		return nil, err
	}
	traceContext.Inject(ctx, propagation.HeaderCarrier(req.Header))
	req.Header.Set("Authorization", "Bearer "+c.Token)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return resp, err
	}
	if resp.StatusCode >= 400 {
		p := &Problem{Status: resp.StatusCode}
		if json.Unmarshal(raw, p) != nil || p.Code == "" {
			p.Code, p.Detail = "http_error", strings.TrimSpace(string(raw))
		}
		return resp, p
	}
	if out != nil {
		return resp, json.Unmarshal(raw, out)
	}
	return resp, nil
}

// Call sends one request of the wire contract and decodes the answer into
// out (nil to drop it); an error answer is a *Problem. It is for the calls
// Do does not make: claim, reconcile, events, a person's decisions.
func (c *Client) Call(ctx context.Context, method, path string, in, out any) error {
	_, err := c.call(ctx, method, path, in, out)
	return err
}

// Get returns the operation by id.
func (c *Client) Get(ctx context.Context, id string) (Operation, error) {
	var op Operation
	_, err := c.call(ctx, http.MethodGet, "/v1/operations/"+url.PathEscape(id), nil, &op)
	return op, err
}

// IsCode reports whether err is a problem with the code.
func IsCode(err error, code string) bool {
	var p *Problem
	return errors.As(err, &p) && p.Code == code
}
