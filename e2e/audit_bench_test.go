package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// BenchmarkAuditExport exports a trail of a million events with the real
// binary, as JSON Lines and as CSV, under /usr/bin/time -v, and reports
// events per second and the process's peak resident memory, which must stay
// under 100 MB however long the trail is:
//
//	go test -run XXX -bench AuditExport -benchtime 1x ./e2e/
//	HANDOFF_TEST_POSTGRES=postgres://… go test -run XXX -bench AuditExport -benchtime 1x ./e2e/
//
// HANDOFF_BENCH_AUDIT_EVENTS changes the million. The events are seeded in
// one statement and do not form valid chains: the export does not check.
func BenchmarkAuditExport(b *testing.B) {
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		b.Skip("needs /usr/bin/time (GNU time) to measure peak memory")
	}
	n := 1_000_000
	if v := os.Getenv("HANDOFF_BENCH_AUDIT_EVENTS"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	url := storetest.URL(b)
	s, err := store.Open(context.Background(), url)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := s.SeedSyntheticAudit(context.Background(), n); err != nil {
		b.Fatal(err)
	}
	s.Close()
	b.Logf("seeded %d audit events in %s", n, time.Since(start).Round(time.Millisecond))
	bin := handoffBinary(b)
	dir := b.TempDir()
	for _, format := range []string{"jsonl", "csv"} {
		b.Run(format, func(b *testing.B) {
			var rate, rssMB float64
			for b.Loop() {
				rate, rssMB = timedExport(b, bin, url, format, filepath.Join(dir, "trail."+format))
			}
			b.ReportMetric(rate, "events/s")
			b.ReportMetric(rssMB, "peak-RSS-MB")
			if rssMB >= 100 {
				b.Errorf("peak RSS %.1f MB, want under 100 MB", rssMB)
			}
		})
	}
}

var (
	exportedRE = regexp.MustCompile(`exported (\d+) audit events`)
	maxRSSRE   = regexp.MustCompile(`Maximum resident set size \(kbytes\): (\d+)`)
)

// timedExport runs `handoff audit export` under GNU time and returns the
// events written per second of wall time and the peak RSS in MB.
func timedExport(b *testing.B, bin, url, format, path string) (float64, float64) {
	cmd := exec.Command("/usr/bin/time", "-v", bin, "audit", "export", "--format", format, "-o", path)
	cmd.Env = append(os.Environ(), "HANDOFF_DATABASE_URL="+url)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("audit export: %v\n%s", err, stderr.String())
	}
	took := time.Since(start)
	exported, rss := exportedRE.FindSubmatch(stderr.Bytes()), maxRSSRE.FindSubmatch(stderr.Bytes())
	if exported == nil || rss == nil {
		b.Fatalf("unexpected output:\n%s", stderr.String())
	}
	events, _ := strconv.ParseFloat(string(exported[1]), 64)
	kb, _ := strconv.ParseFloat(string(rss[1]), 64)
	info, _ := os.Stat(path)
	b.Logf("%s: %.0f events, %.0f MB file, %s, peak RSS %.1f MB", format, events, float64(info.Size())/1e6, took.Round(time.Millisecond), kb/1024)
	return events / took.Seconds(), kb / 1024
}
