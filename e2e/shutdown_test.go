package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/opshandoff/handoff/store/storetest"
)

// TestGracefulShutdown sends SIGTERM while 16 clients register operations
// as fast as they can, and four more are in the middle of a request. The server stops accepting, finishes what it
// accepted, and exits cleanly: no answer is a 5xx, every request that was
// carried out got its answer, and a request that failed on the wire was
// never carried out (it met a closed listener or an idle connection being
// closed, which a client may safely retry).
func TestGracefulShutdown(t *testing.T) {
	db := storetest.URL(t)
	env := map[string]string{"HANDOFF_DATABASE_URL": db, "HANDOFF_ADDR": freeAddr(t, "127.0.0.1"),
		"HANDOFF_CARDS": "testdata/cards.yaml", "HANDOFF_SHUTDOWN_TIMEOUT": "30s"}
	s, cmd, logs := launchCmd(t, env)
	token := s.createToken(t, "campaigns", "load")
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	type result struct {
		key           string
		status        int
		err           error
		beforeSignal  bool // sent before SIGTERM
		answeredAfter bool // answered after SIGTERM
	}
	var (
		signalled atomic.Bool
		done      atomic.Bool
		mu        sync.Mutex
		results   []result
		answered  atomic.Int64
		wg        sync.WaitGroup
		loaded    = make(chan struct{})
		loadedOne sync.Once
	)
	transport := &http.Transport{MaxIdleConnsPerHost: 16}
	defer transport.CloseIdleConnections()
	hc := &http.Client{Transport: transport}
	for w := range 16 {
		wg.Go(func() {
			for n := 0; !done.Load(); n++ {
				key := fmt.Sprintf("shutdown:%d:%d", w, n)
				body, _ := json.Marshal(register(key, true))
				req, _ := http.NewRequest("POST", s.URL+"/v1/operations", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+token)
				req.Header.Set("Content-Type", "application/json")
				r := result{key: key, beforeSignal: !signalled.Load()}
				resp, err := hc.Do(req)
				r.answeredAfter = signalled.Load()
				if err != nil {
					r.err = err
				} else {
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					r.status, r.err = resp.StatusCode, err
					if answered.Add(1) == 200 {
						loadedOne.Do(func() { close(loaded) })
					}
				}
				mu.Lock()
				results = append(results, r)
				mu.Unlock()
				if r.err != nil && signalled.Load() {
					return // the server has gone; nothing more to send
				}
			}
		})
	}
	select {
	case err := <-exited:
		t.Fatalf("the server exited under load: %v\n%s", err, logs.String())
	case <-loaded:
	}
	// Four more clients each send a request whose handler is running —
	// the server has asked for its body (100 Continue) — and send the body
	// only once the server is shutting down.
	slow := make([]chan result, 4)
	var accepted sync.WaitGroup
	sendBody := make(chan struct{})
	for i := range slow {
		slow[i] = make(chan result, 1)
		accepted.Add(1)
		go func() {
			key := fmt.Sprintf("shutdown:slow:%d", i)
			body, _ := json.Marshal(register(key, true))
			pr, pw := io.Pipe()
			go func() {
				<-sendBody
				_, _ = pw.Write(body)
				pw.Close()
			}()
			var once sync.Once
			trace := &httptrace.ClientTrace{Got100Continue: func() { once.Do(accepted.Done) }}
			req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "POST", s.URL+"/v1/operations", pr)
			req.ContentLength = int64(len(body))
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Expect", "100-continue")
			slowClient := &http.Client{Transport: &http.Transport{ExpectContinueTimeout: time.Minute}}
			r := result{key: key, beforeSignal: true}
			resp, err := slowClient.Do(req)
			once.Do(accepted.Done) // refused before the body was asked for
			r.answeredAfter = true
			if r.err = err; err == nil {
				r.status = resp.StatusCode
				resp.Body.Close()
			}
			slow[i] <- r
		}()
	}
	accepted.Wait()

	signalled.Store(true)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for !strings.Contains(logs.String(), "shutting down") {
		time.Sleep(10 * time.Millisecond)
	}
	close(sendBody)
	for _, c := range slow {
		r := <-c
		if r.err != nil || r.status != 201 {
			t.Errorf("%s, in its handler at SIGTERM: %d %v, want 201", r.key, r.status, r.err)
		}
		mu.Lock()
		results = append(results, r)
		mu.Unlock()
	}
	err := <-exited
	done.Store(true)
	wg.Wait()
	if err != nil {
		t.Fatalf("the server did not exit cleanly after SIGTERM: %v\n%s", err, logs.String())
	}
	if out := logs.String(); !strings.Contains(out, "shutting down") || !strings.Contains(out, "stopped") ||
		strings.Contains(out, "cut off") {
		t.Fatalf("the log does not show a graceful shutdown:\n%s", out)
	}

	// A replacement server on the same database tells what was carried out.
	env["HANDOFF_ADDR"] = freeAddr(t, "127.0.0.1")
	after := launch(t, env)
	after.Token = token
	straddled, failed := 0, 0
	for _, r := range results {
		switch {
		case r.err == nil && r.status >= 500:
			t.Errorf("%s answered %d", r.key, r.status)
		case r.err == nil && r.status != 201:
			t.Errorf("%s answered %d, want 201", r.key, r.status)
		case r.err == nil && r.beforeSignal && r.answeredAfter:
			straddled++
		case r.err != nil:
			failed++
			list := after.do(t, "GET", "/v1/operations?key="+url.QueryEscape(r.key), nil)
			if items, _ := list.Body["items"].([]any); list.Status != 200 || len(items) != 0 {
				t.Errorf("%s was carried out but its client got %v instead of the answer", r.key, r.err)
			}
			var opErr interface{ Timeout() bool }
			if errors.As(r.err, &opErr) && opErr.Timeout() {
				t.Errorf("%s timed out: %v", r.key, r.err)
			}
		}
	}
	if straddled == 0 {
		t.Errorf("no request was in flight at SIGTERM (%d requests, %d failed on the wire); the test proved nothing", len(results), failed)
	}
	t.Logf("%d requests, %d in flight at SIGTERM and answered after it, %d refused on the wire and not carried out", len(results), straddled, failed)
}
