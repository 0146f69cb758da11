package e2e

import (
	"bytes"
	"debug/elf"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDockerfile_BuildStage runs the Dockerfile's `go build` lines as
// written (with /out in a temporary folder), where no container runtime
// runs: the binary is static, stamped with the version, free of the build
// machine's paths, and its healthcheck is the image's HEALTHCHECK.
func TestDockerfile_BuildStage(t *testing.T) {
	raw, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	dockerfile := strings.ReplaceAll(string(raw), "\\\n", " ")
	if !regexp.MustCompile(`(?m)^HEALTHCHECK .*CMD \["/usr/local/bin/handoff", "healthcheck"\]`).MatchString(dockerfile) ||
		!regexp.MustCompile(`(?m)^EXPOSE 8080$`).MatchString(dockerfile) || !regexp.MustCompile(`(?m)^USER nonroot`).MatchString(dockerfile) ||
		!regexp.MustCompile(`(?m)^VOLUME /data$`).MatchString(dockerfile) || !strings.Contains(dockerfile, "HANDOFF_DATABASE_URL=sqlite:///data/handoff.db") {
		t.Fatal("the Dockerfile lacks the HEALTHCHECK, EXPOSE 8080, the non-root user or the /data volume for SQLite")
	}
	builds := regexp.MustCompile(`(?m)^RUN (.*go build .*)$`).FindAllStringSubmatch(dockerfile, -1)
	if len(builds) == 0 {
		t.Fatal("the Dockerfile has no go build")
	}
	out := t.TempDir()
	repo, _ := filepath.Abs("..")
	for _, b := range builds {
		line := b[1]
		if !strings.HasPrefix(line, "CGO_ENABLED=0 go build -trimpath") {
			t.Fatalf("not a static, trimmed build: %s", line)
		}
		cmd := exec.Command("sh", "-c", strings.ReplaceAll(line, "/out/", out+"/"))
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "VERSION=v9.8.7-test")
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", line, err, msg)
		}
	}
	bin := filepath.Join(out, "handoff")

	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary is dynamically linked; distroless/static has no libc")
		}
	}
	f.Close()
	contents, _ := os.ReadFile(bin)
	if bytes.Contains(contents, []byte(repo)) {
		t.Errorf("the binary contains the build machine's path %s: -trimpath did not apply", repo)
	}
	if v, err := exec.Command(bin, "version").Output(); err != nil || strings.TrimSpace(string(v)) != "v9.8.7-test" {
		t.Errorf("handoff version: %q %v, want the stamped v9.8.7-test", v, err)
	}

	// The HEALTHCHECK: ready server, server listening on every interface
	// (as in the image), not ready, and nothing listening.
	s := startServer(t)
	healthcheck := func(env []string, args ...string) (string, error) {
		cmd := exec.Command(bin, append([]string{"healthcheck"}, args...)...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := healthcheck(s.env); err != nil || !strings.Contains(out, "ready") {
		t.Errorf("healthcheck of a ready server (HANDOFF_ADDR): %v\n%s", err, out)
	}
	port := s.URL[strings.LastIndex(s.URL, ":")+1:]
	if out, err := healthcheck([]string{"HANDOFF_ADDR=0.0.0.0:" + port, "HANDOFF_OIDC_ISSUER=https://idp.example.com",
		"HANDOFF_OIDC_CLIENT_ID=handoff", "HANDOFF_OIDC_CLIENT_SECRET=x", "HANDOFF_ROLE_MAP=ops=operator",
		"HANDOFF_PUBLIC_URL=https://handoff.example.com"}); err != nil {
		t.Errorf("healthcheck with HANDOFF_ADDR=0.0.0.0 (the image's environment): %v\n%s", err, out)
	}
	notReady := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"code":"unavailable","detail":"the database does not answer"}`))
	}))
	defer notReady.Close()
	if out, err := healthcheck(nil, notReady.URL); err == nil || !strings.Contains(out, "503") {
		t.Errorf("healthcheck of a server that is not ready passed: %s", out)
	}
	if out, err := healthcheck([]string{"HANDOFF_ADDR=" + freeAddr(t, "127.0.0.1")}); err == nil {
		t.Errorf("healthcheck with nothing listening passed: %s", out)
	}
}
