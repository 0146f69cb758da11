// Command handoff-load drives whole lifecycles through a running Handoff's
// HTTP API, as workflows would — register with an inline claim that begins
// at once → settle completed (-calls 2, the default, as client.Do), or
// register with an inline claim → begin → settle (-calls 3), each a
// durable, audited call — from N concurrent clients, and prints
// lifecycles/s and each call's p50 and p99.
//
//	handoff-load -url http://127.0.0.1:8080 -token hnd_… -c 8 -d 15s [-calls 3]
//
// Several -url flags spread the clients over several replicas. -rate paces
// the starts (e.g. at half the maximum a first run found) so the p99 is a
// latency at that load, not a queue at saturation. It is a black box: it
// knows only the API.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

type urls []string

func (u *urls) String() string     { return strings.Join(*u, ",") }
func (u *urls) Set(v string) error { *u = append(*u, strings.TrimSuffix(v, "/")); return nil }

func main() {
	var targets urls
	flag.Var(&targets, "url", "a replica's base URL (repeat for several; clients are spread over them)")
	token := flag.String("token", os.Getenv("HANDOFF_TOKEN"), "a workflow API token (default $HANDOFF_TOKEN)")
	clients := flag.Int("c", 8, "concurrent clients")
	dur := flag.Duration("d", 15*time.Second, "how long to run")
	typ := flag.String("type", "crm.task.create", "the operation type to register")
	prefix := flag.String("prefix", fmt.Sprintf("load_%d", time.Now().UnixNano()), "key prefix, unique per run")
	rate := flag.Float64("rate", 0, "lifecycles/s to start, spread evenly over time (0: as fast as the clients go); "+
		"run once without it to find the maximum, then at half of it for latency at a sustainable load")
	ncalls := flag.Int("calls", 2, "calls per lifecycle: 2 (the claim begins at once) or 3 (a begin call of its own)")
	cpuProfile := flag.String("cpuprofile", "", "write the driver's own CPU profile to this file (it shares the cores with the server)")
	flag.Parse()
	if len(targets) == 0 {
		targets = urls{"http://127.0.0.1:8080"}
	}
	if *token == "" || *clients < 1 || *rate < 0 || (*ncalls != 2 && *ncalls != 3) {
		fmt.Fprintln(os.Stderr, "handoff-load: -token (or HANDOFF_TOKEN), -c ≥ 1, -rate ≥ 0 and -calls 2 or 3 are required")
		os.Exit(2)
	}
	separate = *ncalls == 3
	stop := func() {}
	if *cpuProfile != "" {
		var err error
		if stop, err = profileCPU(*cpuProfile); err != nil {
			fmt.Fprintln(os.Stderr, "handoff-load:", err)
			os.Exit(2)
		}
	}
	r := run(targets, *token, *typ, *prefix, *clients, *dur, newPacer(*rate, time.Now()))
	stop()
	r.print(os.Stdout, *clients, len(targets))
	if r.failed.Load() > 0 {
		os.Exit(1)
	}
}

// separate: the lifecycle sends begin as a call of its own (-calls 3).
var separate bool

var calls = []string{"register+claim", "begin", "settle"}

// callNames are the calls a lifecycle makes, by their place in result.lat.
func callNames() []string {
	if separate {
		return calls
	}
	return []string{"register+claim+begin", "", "settle"}
}

type result struct {
	mu        sync.Mutex
	latencies [3][]time.Duration
	done      atomic.Int64
	failed    atomic.Int64
	firstErr  atomic.Value
	elapsed   time.Duration
	pace      *pacer
	transport *http.Transport
}

func run(targets []string, token, typ, prefix string, clients int, dur time.Duration, pace *pacer) *result {
	r := &result{pace: pace, transport: &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}}
	hc := &http.Client{Transport: r.transport, Timeout: 30 * time.Second}
	var seq atomic.Int64
	deadline := time.Now().Add(dur)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range clients {
		base := targets[i%len(targets)]
		wg.Go(func() {
			var lat [3][]time.Duration
			p, err := newPoster(base, token, hc)
			if err != nil {
				r.failed.Add(1)
				r.firstErr.CompareAndSwap(nil, err)
				return
			}
			defer p.close()
			for time.Now().Before(deadline) {
				if !pace.wait(deadline) {
					break
				}
				key := fmt.Sprintf("%s_%d:task", prefix, seq.Add(1))
				if err := lifecycle(p, typ, key, &lat); err != nil {
					r.failed.Add(1)
					r.firstErr.CompareAndSwap(nil, err)
					time.Sleep(10 * time.Millisecond)
					continue
				}
				r.done.Add(1)
			}
			r.mu.Lock()
			for k := range lat {
				r.latencies[k] = append(r.latencies[k], lat[k]...)
			}
			r.mu.Unlock()
		})
	}
	wg.Wait()
	r.elapsed = time.Since(start)
	return r
}

// lifecycle sends one lifecycle's calls. The bodies are the bytes
// json.Marshal wrote for them as maps (members in sorted order), written by
// append (body.go); the answers are read by a scanner of their own
// (answer.go) for what is checked — the claim's lease token, the settled
// state — so the driver takes less of the cores it shares with the server.
func lifecycle(p poster, typ, key string, lat *[3][]time.Duration) error {
	qkey, qtyp := quote(nil, key), quote(nil, typ)
	data, err := call(p, "/v1/operations", registerBody(qkey, qtyp, !separate), &lat[0])
	if err != nil {
		return fmt.Errorf("register: %w", err)
	}
	reg, err := readRegistered(data)
	if err != nil {
		return fmt.Errorf("register %s: %w", key, err)
	}
	if !reg.claimed {
		return fmt.Errorf("register %s: no claim in the answer", key)
	}
	if separate {
		if _, err := call(p, "/v1/operations/"+reg.id+"/begin", beginBody(reg.token), &lat[1]); err != nil {
			return fmt.Errorf("begin: %w", err)
		}
	}
	data, err = call(p, "/v1/operations/"+reg.id+"/settle", settleBody(reg.token, key), &lat[2])
	if err != nil {
		return fmt.Errorf("settle: %w", err)
	}
	state, err := readState(data)
	if err != nil {
		return fmt.Errorf("settle %s: %w", key, err)
	}
	if state != "completed" {
		return fmt.Errorf("settle %s: state %q", key, state)
	}
	return nil
}

// call posts body and returns the answer's body, an error for any status
// but 2xx.
func call(p poster, path string, body []byte, lat *[]time.Duration) ([]byte, error) {
	start := time.Now()
	status, data, err := p.post(path, body)
	*lat = append(*lat, time.Since(start))
	if err != nil {
		return nil, err
	}
	if status/100 != 2 {
		return nil, fmt.Errorf("%s: %d %s", path, status, bytes.TrimSpace(data))
	}
	return data, nil
}

func (r *result) print(w io.Writer, clients, replicas int) {
	secs := r.elapsed.Seconds()
	n := 2
	if separate {
		n = 3
	}
	fmt.Fprintf(w, "handoff lifecycles=%d failed=%d clients=%d replicas=%d calls=%d seconds=%.2f lifecycles_per_s=%.1f\n",
		r.done.Load(), r.failed.Load(), clients, replicas, n, secs, float64(r.done.Load())/secs)
	if r.pace.rate > 0 {
		fmt.Fprintf(w, "  paced at %.1f lifecycles/s; %d started behind schedule\n", r.pace.rate, r.pace.late.Load())
	}
	for k, name := range callNames() {
		l := r.latencies[k]
		if len(l) == 0 || name == "" {
			continue
		}
		slices.Sort(l)
		fmt.Fprintf(w, "  %-15s n=%-7d p50=%-10s p99=%s\n", name, len(l), percentile(l, 0.50), percentile(l, 0.99))
	}
	if err, ok := r.firstErr.Load().(error); ok && !errors.Is(err, nil) {
		fmt.Fprintf(w, "first error: %v\n", err)
	}
}

// percentile is the p-th (0 to 1) of the sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	i := int(float64(len(sorted)-1) * p)
	return sorted[i].Round(10 * time.Microsecond)
}
