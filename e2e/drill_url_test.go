package e2e

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDrill_URLAgainstADevSignInServer: `handoff serve` with the
// development sign-in (no OIDC, so no person has a bearer token); an admin
// issues two drill credentials; `handoff drill --url` runs as a separate
// process, from a directory with no database and no HANDOFF_DATABASE_URL,
// and passes; its receipt appears on that server's Types page for a person
// signed in through the development sign-in, and nothing was written
// where the drill ran.
func TestDrill_URLAgainstADevSignInServer(t *testing.T) {
	s := startServer(t)
	workflow := s.createToken(t, "drill", "drill")
	creds := map[string]string{}
	for _, role := range []string{"operator", "approver"} {
		cmd := exec.Command(s.bin, "token", "create", "--drill-person", role, "--name", "drill-"+role)
		cmd.Env = s.env
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("token create --drill-person %s: %v", role, err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		creds[role] = lines[len(lines)-1]
	}

	dir := t.TempDir()
	cmd := exec.Command(s.bin, "drill", "--type", "crm.task.create", "--url", s.URL, "--token", workflow,
		"--operator-token", creds["operator"], "--approver-token", creds["approver"], "--receipts", filepath.Join(dir, "receipts"),
		"--by", "e2e@example.com")
	cmd.Dir = dir
	for _, kv := range os.Environ() { // the drill knows the server by its URL alone
		if !strings.HasPrefix(kv, "HANDOFF_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "PASS crm.task.create") {
		t.Fatalf("drill --url: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`receipt \S*(drl_[0-9a-f]+)\.json`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("the drill named no receipt:\n%s", out)
	}
	receipt := string(m[1])
	if _, err := os.Stat(filepath.Join(dir, "handoff.db")); !os.IsNotExist(err) {
		t.Fatalf("the drill wrote a local database where it ran: %v", err)
	}

	// A person signs in with the development sign-in and reads Types.
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	resp, err := browser.PostForm(s.URL+"/auth/login", url.Values{"name": {"Vic Viewer"}, "role": {"viewer"}, "next": {"/desk/types"}})
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Request.URL.Path != "/desk/types" {
		t.Fatalf("development sign-in: %d at %s\n%s", resp.StatusCode, resp.Request.URL, page)
	}
	card := regexp.MustCompile(`(?s)<section[^>]*id="type-crm.task.create".*?</section>`).Find(page)
	if card == nil {
		t.Fatalf("the Types page has no crm.task.create:\n%s", page)
	}
	status := regexp.MustCompile(`(?s)data-testid="drill-status".*?</p>`).Find(card)
	today := time.Now().UTC().Format(time.DateOnly)
	for _, want := range []string{"<strong>drilled</strong>", "last drill: " + today, ", pass", "/desk/drills/" + receipt} {
		if !strings.Contains(string(status), want) {
			t.Fatalf("the Types page's drill line lacks %q: %s", want, status)
		}
	}
	if strings.Contains(string(status), "not-drilled") {
		t.Fatalf("the Types page says not drilled: %s", status)
	}
	r, err := browser.Get(s.URL + "/desk/drills/" + receipt)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != 200 || !strings.Contains(string(body), receipt) {
		t.Fatalf("the stored receipt: %d\n%s", r.StatusCode, body)
	}
}
