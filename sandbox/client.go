package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client calls a sandbox over HTTP, as a worker calls its provider.
type Client struct {
	BaseURL string
	HTTP    *http.Client
}

// NewClient returns a client whose calls give up after timeout: a
// timeout_after fault then looks to the caller exactly like a lost answer.
func NewClient(baseURL string, timeout time.Duration) *Client {
	return &Client{BaseURL: strings.TrimRight(baseURL, "/"), HTTP: &http.Client{Timeout: timeout}}
}

// Reply is what the caller saw: an answer, a refusal with its status, or no
// answer at all (Err, for a dropped connection or a timeout).
type Reply struct {
	Status     int
	Answer     Answer
	Message    string
	RetryAfter time.Duration
	Err        error
}

// Lost reports whether no answer came back, so the caller cannot know
// whether the provider acted.
func (r Reply) Lost() bool { return r.Err != nil }

// TimedOut reports whether the caller gave up waiting.
func (r Reply) TimedOut() bool {
	var ne interface{ Timeout() bool }
	return errors.As(r.Err, &ne) && ne.Timeout()
}

// String is the reply in a few words, for receipts.
func (r Reply) String() string {
	switch {
	case r.TimedOut():
		return "no answer: timed out"
	case r.Err != nil:
		return "no answer: " + r.Err.Error()
	case r.Status == http.StatusOK && r.Answer.Replayed:
		return fmt.Sprintf("200 replayed %s (executions %d)", r.Answer.Ref, r.Answer.Executions)
	case r.Status == http.StatusOK:
		return fmt.Sprintf("200 executed %s (executions %d)", r.Answer.Ref, r.Answer.Executions)
	case r.RetryAfter > 0:
		return fmt.Sprintf("%d %s (Retry-After %s)", r.Status, r.Message, r.RetryAfter)
	}
	return fmt.Sprintf("%d %s", r.Status, r.Message)
}

// Execute asks the sandbox to carry out the side effect under key, with
// the named fault ("" for none).
func (c *Client) Execute(ctx context.Context, key string, params any, fault string) Reply {
	raw, err := json.Marshal(map[string]any{"key": key, "params": params})
	if err != nil {
		return Reply{Err: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.BaseURL+"/execute", bytes.NewReader(raw))
	if err != nil {
		return Reply{Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	if fault != "" {
		req.Header.Set(FaultHeader, fault)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return Reply{Err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return Reply{Err: err}
	}
	r := Reply{Status: resp.StatusCode}
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(body, &r.Answer); err != nil {
			return Reply{Err: err}
		}
		return r
	}
	var e struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(body, &e)
	r.Message = e.Error
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
		r.RetryAfter = time.Duration(s) * time.Second
	}
	return r
}

// Lookup asks whether the side effect under key happened; fault may be
// lookup_miss.
func (c *Client) Lookup(ctx context.Context, key, fault string) (LookupAnswer, error) {
	var a LookupAnswer
	err := c.get(ctx, "/lookup?key="+url.QueryEscape(key), fault, &a)
	return a, err
}

// Count is how often the side effect under key happened.
func (c *Client) Count(ctx context.Context, key string) (Count, error) {
	var n Count
	err := c.get(ctx, "/executions?key="+url.QueryEscape(key), "", &n)
	return n, err
}

func (c *Client) get(ctx context.Context, path, fault string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.BaseURL+path, nil)
	if err != nil {
		return err
	}
	if fault != "" {
		req.Header.Set(FaultHeader, fault)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("sandbox %s: %d %s", path, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	return json.Unmarshal(body, out)
}
