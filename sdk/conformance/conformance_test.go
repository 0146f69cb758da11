package conformance

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/client"
)

// The scenario file's shape (see its "about").
type scenarioFile struct {
	Scenarios []scenario `json:"scenarios"`
}

type scenario struct {
	Name       string         `json:"name"`
	Clients    []string       `json:"clients"`
	Type       string         `json:"type"`
	Content    map[string]any `json:"content"`
	Steps      []step         `json:"steps"`
	State      string         `json:"state"`
	Timeline   []string       `json:"timeline"`
	Executions int            `json:"executions"`
	FaultsHit  *int           `json:"faults_hit"`
	// SettlesReplayed is how many settles the server answered with
	// Idempotent-Replayed: true, as the proxy saw them.
	SettlesReplayed *int `json:"settles_replayed"`
}

type step struct {
	Run *struct {
		Content      map[string]any `json:"content"`
		LeaseSeconds int            `json:"lease_seconds"`
		Provider     provider       `json:"provider"`
		Form         string         `json:"form"`      // Go has one form: Do
		Coroutine    bool           `json:"coroutine"` // a Python matter; Go's fn is plain
	} `json:"run"`
	ClaimElsewhere *struct {
		LeaseSeconds int `json:"lease_seconds"`
	} `json:"claim_elsewhere"`
	Fault  json.RawMessage `json:"fault"`
	Expect expect          `json:"expect"`
}

type provider struct {
	SleepMS int             `json:"sleep_ms"`
	Returns json.RawMessage `json:"returns"`
	Answer  string          `json:"answer"`
	NotSent string          `json:"not_sent"`
	Execute *struct {
		Fault     string `json:"fault"`
		TimeoutMS int    `json:"timeout_ms"`
	} `json:"execute"`
	Fail *struct {
		Class             string `json:"class"`
		Code              string `json:"code"`
		Message           string `json:"message"`
		RetryAfterSeconds int    `json:"retry_after_seconds"`
	} `json:"fail"`
}

type expect struct {
	Outcome       string `json:"outcome"`
	Replayed      *bool  `json:"replayed"`
	FnCalls       *int   `json:"fn_calls"`
	SameRef       bool   `json:"same_ref"`
	Reason        string `json:"reason"`
	Status        int    `json:"status"`
	Code          string `json:"code"`
	RetryAfterMin int    `json:"retry_after_min"`
	Ref           string `json:"ref"`
	RefIsProvider bool   `json:"ref_is_provider"`
}

// env is what sdk/conformance/env printed.
type env struct {
	URL     string `json:"url"`
	Sandbox string `json:"sandbox"`
	Token   string `json:"token"`
	Faults  string `json:"faults"`
}

func TestConformance(t *testing.T) {
	raw, err := os.ReadFile("scenarios.json")
	if err != nil {
		t.Fatal(err)
	}
	var file scenarioFile
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	e := startEnv(t)
	c := client.New(e.URL, e.Token)
	run := fmt.Sprintf("go-%d", time.Now().UnixNano())
	for _, sc := range file.Scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			if sc.Clients != nil && !slices.Contains(sc.Clients, "go") {
				t.Skipf("for %v: an answer Go's Result cannot express", sc.Clients)
			}
			post(t, http.MethodDelete, e.Faults, nil, nil)
			runScenario(t, c, e, sc, "conf:"+run+":"+sc.Name)
		})
	}
}

func runScenario(t *testing.T, c *client.Client, e env, sc scenario, key string) {
	ctx := context.Background()
	var firstRef string
	for i, st := range sc.Steps {
		switch {
		case st.Fault != nil:
			post(t, http.MethodPost, e.Faults, st.Fault, nil)
		case st.ClaimElsewhere != nil:
			body := map[string]any{"key": key, "type": sc.Type, "content": sc.Content,
				"claim": map[string]any{"worker": "elsewhere", "lease_seconds": st.ClaimElsewhere.LeaseSeconds}}
			if err := c.Call(ctx, http.MethodPost, "/v1/operations", body, nil); err != nil {
				t.Fatalf("step %d: claim elsewhere: %v", i, err)
			}
		case st.Run != nil:
			content := sc.Content
			if st.Run.Content != nil {
				content = st.Run.Content
			}
			calls := 0
			var providerRef string
			op, err := c.Do(ctx, client.Request{Key: key, Type: sc.Type, Content: content, LeaseSeconds: st.Run.LeaseSeconds},
				func(ctx context.Context, claim client.Claim) (client.Result, error) {
					calls++
					r, err := callProvider(ctx, e.Sandbox, claim, st.Run.Provider)
					providerRef = r.Ref
					return answer(r, st.Run.Provider), err
				})
			got := classify(op, err, calls)
			if got.reason == "in_progress" {
				got.retryAfter = leaseLeft(t, c, op.ID)
			}
			x := st.Expect
			if got.outcome != x.Outcome {
				t.Fatalf("step %d: outcome %s, want %s (operation state %q, err %v)", i, got.outcome, x.Outcome, op.State, err)
			}
			if x.FnCalls != nil && calls != *x.FnCalls {
				t.Errorf("step %d: fn called %d times, want %d", i, calls, *x.FnCalls)
			}
			if x.Replayed != nil && got.replayed != *x.Replayed {
				t.Errorf("step %d: replayed %v, want %v", i, got.replayed, *x.Replayed)
			}
			if x.Ref != "" && (op.Result == nil || op.Result.Ref != x.Ref) {
				t.Errorf("step %d: result %+v, want the ref %q", i, op.Result, x.Ref)
			}
			if x.RefIsProvider && (op.Result == nil || op.Result.Ref != providerRef || providerRef == "") {
				t.Errorf("step %d: result %+v, want the provider's ref %q", i, op.Result, providerRef)
			}
			if got.outcome == "completed" && op.Result != nil {
				if firstRef == "" {
					firstRef = op.Result.Ref
				} else if x.SameRef && op.Result.Ref != firstRef {
					t.Errorf("step %d: ref %q, want the first run's %q", i, op.Result.Ref, firstRef)
				}
			}
			if x.Reason != "" && got.reason != x.Reason {
				t.Errorf("step %d: reason %q, want %q", i, got.reason, x.Reason)
			}
			var p *client.Problem
			if x.Code != "" && (!errors.As(err, &p) || p.Code != x.Code || p.Status != x.Status) {
				t.Errorf("step %d: error %v, want %d %s", i, err, x.Status, x.Code)
			}
			if x.RetryAfterMin > 0 && got.retryAfter < time.Duration(x.RetryAfterMin)*time.Second {
				t.Errorf("step %d: retry after %s, want at least %ds", i, got.retryAfter, x.RetryAfterMin)
			}
		}
	}
	checkAfter(t, c, e, sc, key)
}

// outcome is what a Do call amounted to, in the scenario file's words: the
// Go client reports states and problems, the other clients raise errors.
type outcome struct {
	outcome    string
	replayed   bool
	reason     string
	retryAfter time.Duration
}

func classify(op client.Operation, err error, calls int) outcome {
	var p *client.Problem
	if errors.As(err, &p) {
		if p.Operation != nil {
			op = *p.Operation
		}
		switch {
		case p.Code == "fingerprint_mismatch":
			return outcome{outcome: "FingerprintMismatch"}
		case p.Code == "stale_lease":
			return outcome{outcome: "StaleLease"}
		case p.Code == "not_claimable":
			o := byState(op)
			o.reason = p.Reason
			if p.Reason == "in_progress" {
				o.outcome = "RetryLater"
			}
			return o
		}
		return outcome{outcome: "problem " + p.Code}
	}
	o := byState(op)
	o.replayed = op.Replayed
	if op.Replayed && calls != 0 {
		o.outcome = "replayed after calling fn"
	}
	return o
}

func byState(op client.Operation) outcome {
	switch op.State {
	case "completed":
		return outcome{outcome: "completed"}
	case "failed_retryable":
		o := outcome{outcome: "RetryLater"}
		if op.NextRetryAt != nil {
			o.retryAfter = time.Until(*op.NextRetryAt)
		}
		return o
	case "processing", "action_pending":
		return outcome{outcome: "RetryLater"} // retryAfter: see leaseLeft
	case "awaiting_approval":
		return outcome{outcome: "AwaitingApproval"}
	case "unknown_outcome":
		return outcome{outcome: "OutcomeUnknown"}
	case "failed_terminal":
		return outcome{outcome: "OnTheDesk"}
	}
	return outcome{outcome: "state " + op.State}
}

// leaseLeft is how long another worker's lease still runs: the Go
// client's Operation carries no lease, so it is read from the server.
func leaseLeft(t *testing.T, c *client.Client, id string) time.Duration {
	var op struct {
		Lease *struct {
			ExpiresAt time.Time `json:"expires_at"`
		} `json:"lease"`
	}
	if err := c.Call(context.Background(), http.MethodGet, "/v1/operations/"+id, nil, &op); err != nil || op.Lease == nil {
		t.Fatalf("reading the lease of %s: %v", id, err)
	}
	return time.Until(op.Lease.ExpiresAt)
}

// answer is what fn returns when the scenario says: the provider's ref as
// the bare ref, or a result without a ref (Go's Result holds only data).
func answer(r client.Result, p provider) client.Result {
	switch {
	case p.Answer != "":
		return client.Result{Ref: r.Ref}
	case p.Returns != nil:
		var x struct {
			Data json.RawMessage `json:"data"`
		}
		_ = json.Unmarshal(p.Returns, &x)
		return client.Result{Data: x.Data}
	}
	return r
}

// callProvider is fn: what the scenario says the provider call does.
func callProvider(ctx context.Context, sandboxURL string, claim client.Claim, p provider) (client.Result, error) {
	if p.NotSent != "" {
		return client.Result{}, fmt.Errorf("%w: %s", client.ErrNotSent, p.NotSent)
	}
	if p.SleepMS > 0 {
		time.Sleep(time.Duration(p.SleepMS) * time.Millisecond)
	}
	if p.Fail != nil {
		return client.Result{}, &client.ProviderError{Class: p.Fail.Class, Code: p.Fail.Code, Message: p.Fail.Message,
			RetryAfter: time.Duration(p.Fail.RetryAfterSeconds) * time.Second}
	}
	x := p.Execute
	timeout := 10 * time.Second
	if x.TimeoutMS > 0 {
		timeout = time.Duration(x.TimeoutMS) * time.Millisecond
	}
	body, _ := json.Marshal(map[string]any{"key": claim.ProviderKey, "params": claim.Content})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, sandboxURL+"/execute", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if x.Fault != "" {
		req.Header.Set("Sandbox-Fault", x.Fault)
	}
	resp, err := (&http.Client{Timeout: timeout}).Do(req)
	if err != nil {
		return client.Result{}, err // no answer: the outcome is unknown
	}
	defer resp.Body.Close()
	var a struct {
		Ref        string `json:"ref"`
		Executions int    `json:"executions"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil || resp.StatusCode != http.StatusOK {
		return client.Result{}, &client.ProviderError{Class: "transient", Code: resp.Status, Message: "sandbox refused"}
	}
	data, _ := json.Marshal(map[string]any{"executions": a.Executions})
	return client.Result{Ref: a.Ref, Data: data}, nil
}

// checkAfter compares the operation's state (waiting a little for the
// sweeper), the sandbox's executions and the proxy's hits with the file.
func checkAfter(t *testing.T, c *client.Client, e env, sc scenario, key string) {
	var list struct {
		Items []client.Operation `json:"items"`
	}
	if err := c.Call(context.Background(), http.MethodGet, "/v1/operations?key="+key, nil, &list); err != nil || len(list.Items) != 1 {
		t.Fatalf("listing %s: %v %+v", key, err, list)
	}
	op := list.Items[0]
	for deadline := time.Now().Add(5 * time.Second); op.State != sc.State && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		op, _ = c.Get(context.Background(), op.ID)
	}
	if op.State != sc.State {
		t.Errorf("state %s, want %s", op.State, sc.State)
	}
	if sc.Timeline != nil {
		var tl struct {
			Items []struct {
				Action string `json:"action"`
			} `json:"items"`
		}
		if err := c.Call(context.Background(), http.MethodGet, "/v1/operations/"+op.ID+"/timeline", nil, &tl); err != nil {
			t.Fatalf("timeline: %v", err)
		}
		var actions []string
		for _, e := range tl.Items {
			actions = append(actions, e.Action)
		}
		if !slices.Equal(actions, sc.Timeline) {
			t.Errorf("timeline %v, want %v", actions, sc.Timeline)
		}
	}
	var count struct {
		Executions int `json:"executions"`
	}
	post(t, http.MethodGet, e.Sandbox+"/executions?key="+op.ProviderKey, nil, &count)
	if count.Executions != sc.Executions {
		t.Errorf("the sandbox executed %d times, want %d", count.Executions, sc.Executions)
	}
	if sc.FaultsHit != nil || sc.SettlesReplayed != nil {
		var f struct {
			Hits            int `json:"hits"`
			SettlesReplayed int `json:"settles_replayed"`
		}
		post(t, http.MethodGet, e.Faults, nil, &f)
		if sc.FaultsHit != nil && f.Hits != *sc.FaultsHit {
			t.Errorf("the proxy answered %d requests, want %d", f.Hits, *sc.FaultsHit)
		}
		if sc.SettlesReplayed != nil && f.SettlesReplayed != *sc.SettlesReplayed {
			t.Errorf("the server answered %d settles as replays, want %d", f.SettlesReplayed, *sc.SettlesReplayed)
		}
	}
}

func post(t *testing.T, method, url string, body []byte, out any) {
	t.Helper()
	req, _ := http.NewRequest(method, url, bytes.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %d %s", method, url, resp.StatusCode, raw)
	}
	if out != nil {
		_ = json.Unmarshal(raw, out)
	}
}

// startEnv builds (unless HANDOFF_BIN and HANDOFF_CONFORMANCE_ENV name
// them) and starts the environment; it ends with the test.
func startEnv(t *testing.T) env {
	t.Helper()
	dir := t.TempDir()
	bin := build(t, "HANDOFF_BIN", filepath.Join(dir, "handoff"), "../../cmd/handoff")
	envBin := build(t, "HANDOFF_CONFORMANCE_ENV", filepath.Join(dir, "conformance-env"), "./env")
	cmd := exec.Command(envBin, "-handoff", bin, "-cards", "cards.yaml")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var logs bytes.Buffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("environment log:\n%s", logs.String())
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("the environment did not start: %v\n%s", err, logs.String())
	}
	var e env
	if err := json.Unmarshal([]byte(line), &e); err != nil {
		t.Fatalf("environment said %q: %v", line, err)
	}
	return e
}

func build(t *testing.T, envVar, out, pkg string) string {
	t.Helper()
	if p := os.Getenv(envVar); p != "" {
		return p
	}
	cmd := exec.Command("go", "build", "-o", out, pkg)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, strings.TrimSpace(string(b)))
	}
	return out
}
