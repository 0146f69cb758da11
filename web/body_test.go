package web

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// rawPost sends body as it is, with its length unknown to the server when
// chunked (no Content-Length).
func (b *browser) rawPost(path, contentType string, body []byte, chunked bool) reply {
	b.t.Helper()
	var rd io.Reader = bytes.NewReader(body)
	if chunked {
		rd = io.MultiReader(rd) // hides the length: sent chunked
	}
	req, err := http.NewRequest("POST", b.rig.base+path, rd)
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.Header.Set("Origin", b.rig.base)
	resp, err := b.http.Do(req)
	if err != nil {
		b.t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: string(raw)}
}

func multipartReason(size int) (string, []byte) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	_ = w.WriteField("form", "note")
	_ = w.WriteField("reason", strings.Repeat("r", size))
	_ = w.Close()
	return w.FormDataContentType(), buf.Bytes()
}

// TestDesk_BodyLimit: a desk or sign-in form over 1 MB is refused with 413
// before it is read — without a session too, where the expired-session
// keeper would otherwise read and keep it — and a multipart body, which the
// desk's forms never are, with 415. No flash is set for either.
func TestDesk_BodyLimit(t *testing.T) {
	r := newSignInRig(t, false, "")
	big := "reason=" + strings.Repeat("r", MaxFormBytes+1)
	mpType, mpBig := multipartReason(2 * MaxFormBytes)
	mpSmallType, mpSmall := multipartReason(10)
	cases := []struct {
		name, path, contentType string
		body                    []byte
		chunked                 bool
		want                    int
	}{
		{"decision without a session", "/desk/operations/op_x/notes", "application/x-www-form-urlencoded", []byte(big), false, 413},
		{"decision without a session, chunked", "/desk/operations/op_x/notes", "application/x-www-form-urlencoded", []byte(big), true, 413},
		{"multipart decision without a session", "/desk/operations/op_x/notes", mpType, mpBig, false, 413},
		{"multipart decision without a session, chunked", "/desk/operations/op_x/notes", mpType, mpBig, true, 415},
		{"small multipart decision", "/desk/operations/op_x/resolve", mpSmallType, mpSmall, false, 415},
		{"batch preview", "/desk/batch/preview", "application/x-www-form-urlencoded", []byte(big), false, 413},
		{"development sign-in", "/auth/login", "application/x-www-form-urlencoded", []byte(big), true, 413},
		{"sign-out", "/auth/logout", "application/x-www-form-urlencoded", []byte(big), false, 413},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := r.browser()
			got := b.rawPost(c.path, c.contentType, c.body, c.chunked)
			if got.status != c.want {
				t.Fatalf("status %d, want %d: %.200s", got.status, c.want, got.body)
			}
			if b.cookie("handoff_flash") != "" {
				t.Fatal("a refused body left a flash")
			}
		})
	}

	// Just under the bound a decision without a session is kept as before,
	// without what was typed: it could never fit a cookie.
	b := r.browser()
	form := url.Values{"form": {"note"}, "text": {strings.Repeat("t", MaxFormBytes-100)}}
	got := b.post("/desk/operations/op_x/notes", form)
	if got.status != http.StatusSeeOther || !strings.HasPrefix(got.location().Path, "/auth/login") {
		t.Fatalf("status %d, Location %q", got.status, got.header.Get("Location"))
	}
	if f := b.cookie("handoff_flash"); f == "" || len(f) > maxFlash {
		t.Fatalf("flash of %d bytes", len(f))
	}
}
