package drill

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Verdicts of a case and of a drill.
const (
	VerdictPass = "pass"
	VerdictFail = "fail"
	// VerdictNotApplicable: the card makes the case meaningless (no lookup
	// to find anything with, no key retention to outlive); counts as a pass.
	VerdictNotApplicable = "not_applicable"
	// VerdictSkipped: the drill could not run the case here (no person's
	// credential, a wait longer than allowed); the drill is incomplete.
	VerdictSkipped    = "skipped"
	VerdictIncomplete = "incomplete"
)

// Receipt is the record of one drill of one type: the conditions, every
// case's steps and the provider's answers, the executions the sandbox
// counted, the state reached, the retries, whether the stored result
// matched, and the verdicts.
type Receipt struct {
	ID             string       `json:"id"`
	Type           string       `json:"type"`
	Card           CardRef      `json:"card"`
	HandoffVersion string       `json:"handoff_version"`
	HandoffURL     string       `json:"handoff_url"`
	RanBy          string       `json:"ran_by"`
	StartedAt      time.Time    `json:"started_at"`
	FinishedAt     time.Time    `json:"finished_at"`
	Conditions     Conditions   `json:"conditions"`
	Cases          []CaseResult `json:"cases"`
	Verdict        string       `json:"verdict"`
}

// CardRef names the card drilled.
type CardRef struct {
	Name    string `json:"name"`
	Version int    `json:"version"`
	SHA256  string `json:"sha256"`
}

// Conditions are what the card claims and how the sandbox behaved.
type Conditions struct {
	Adapter              string   `json:"adapter"`
	SandboxIdempotency   string   `json:"sandbox_idempotency"`
	SandboxRetention     string   `json:"sandbox_retention"`
	SandboxLookup        string   `json:"sandbox_lookup"`
	ProviderIdempotency  string   `json:"provider_idempotency"`
	ProviderKeyRetention string   `json:"provider_key_retention"`
	Lookup               string   `json:"lookup"`
	LookupAuthoritative  bool     `json:"lookup_authoritative"`
	RetryLayer           string   `json:"retry_layer"`
	Retryable            []string `json:"retryable"`
	RequiresApproval     bool     `json:"requires_approval"`
	Backoff              string   `json:"backoff"`
	ProviderTimeout      string   `json:"provider_timeout"`
	KeyPrefix            string   `json:"key_prefix"`
	Namespace            string   `json:"namespace"`
	Notifications        string   `json:"notifications"`
	Notes                []string `json:"notes,omitempty"`
}

// CaseResult is one case of the drill.
type CaseResult struct {
	Number            int      `json:"number"`
	Name              string   `json:"name"`
	Expected          string   `json:"expected"`
	Steps             []string `json:"steps"`
	ProviderAnswers   []string `json:"provider_answers"`
	ProviderKey       string   `json:"provider_key,omitempty"`
	Executions        int      `json:"executions"`
	State             string   `json:"state"`
	Retries           int      `json:"retries"`
	StoredResultMatch *bool    `json:"stored_result_match"`
	Verdict           string   `json:"verdict"`
	Explanation       string   `json:"explanation,omitempty"`
	// SettledBy is "lookup" when Handoff settled the case's unknown
	// outcome by looking it up itself, no person asked.
	SettledBy string `json:"settled_by,omitempty"`
}

// Marshal is the receipt as written to its JSON file; its hash is the one
// recorded in the audit trail.
func (r Receipt) Marshal() []byte {
	b, _ := json.MarshalIndent(r, "", "  ")
	return append(b, '\n')
}

// Hash is the SHA-256 of a receipt file's bytes, hex.
func Hash(raw []byte) string {
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// Parse reads a receipt file.
func Parse(raw []byte) (Receipt, error) {
	var r Receipt
	if err := json.Unmarshal(raw, &r); err != nil {
		return Receipt{}, fmt.Errorf("not a drill receipt: %w", err)
	}
	if r.ID == "" || r.Type == "" {
		return Receipt{}, fmt.Errorf("not a drill receipt: no id or type")
	}
	return r, nil
}

// Write writes the receipt as <dir>/<id>.json and a short Markdown
// rendering beside it, and answers the JSON's path and bytes.
func Write(dir string, r Receipt) (string, []byte, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, err
	}
	raw := r.Marshal()
	p := filepath.Join(dir, r.ID+".json")
	if err := os.WriteFile(p, raw, 0o644); err != nil {
		return "", nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, r.ID+".md"), []byte(r.Markdown(Hash(raw))), 0o644); err != nil {
		return "", nil, err
	}
	return p, raw, nil
}

// Markdown is a short rendering for people; the JSON is the record.
func (r Receipt) Markdown(sha string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Drill receipt %s: %s — %s\n\n", r.ID, r.Type, strings.ToUpper(r.Verdict))
	fmt.Fprintf(&b, "- card: %s version %d, sha256 %s\n", r.Card.Name, r.Card.Version, r.Card.SHA256)
	fmt.Fprintf(&b, "- Handoff %s at %s\n", or(r.HandoffVersion, "(unknown version)"), r.HandoffURL)
	fmt.Fprintf(&b, "- ran by %s, %s to %s\n", r.RanBy, r.StartedAt.Format(time.RFC3339), r.FinishedAt.Format(time.RFC3339))
	c := r.Conditions
	fmt.Fprintf(&b, "- card claims: provider_idempotency %s (retention %s), lookup %s (authoritative %t), retry_layer %s, retryable [%s]\n",
		c.ProviderIdempotency, or(c.ProviderKeyRetention, "—"), c.Lookup, c.LookupAuthoritative, c.RetryLayer, strings.Join(c.Retryable, ", "))
	fmt.Fprintf(&b, "- sandbox: idempotency %s, retention %s, lookup %s\n", c.SandboxIdempotency, c.SandboxRetention, c.SandboxLookup)
	if c.Notifications != "" {
		fmt.Fprintf(&b, "- namespace %s; notifications: %s\n", c.Namespace, c.Notifications)
	}
	for _, n := range c.Notes {
		fmt.Fprintf(&b, "- note: %s\n", n)
	}
	if sha != "" {
		fmt.Fprintf(&b, "- receipt sha256 (JSON file): %s\n", sha)
	}
	if cases := settledByLookup(r.Cases); cases != "" {
		fmt.Fprintf(&b, "- settled by Handoff's own lookup, no person asked: case %s\n", cases)
	}
	b.WriteString("\n| # | case | verdict | state | executions | retries | stored result |\n|---|---|---|---|---|---|---|\n")
	for _, cs := range r.Cases {
		match := "—"
		if cs.StoredResultMatch != nil {
			match = map[bool]string{true: "matches", false: "DIFFERS"}[*cs.StoredResultMatch]
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %d | %d | %s |\n", cs.Number, cs.Name, cs.Verdict, or(cs.State, "—"), cs.Executions, cs.Retries, match)
	}
	for _, cs := range r.Cases {
		if cs.Explanation != "" {
			fmt.Fprintf(&b, "\n**Case %d (%s), %s:** %s\n", cs.Number, cs.Name, cs.Verdict, cs.Explanation)
		}
	}
	return b.String()
}
