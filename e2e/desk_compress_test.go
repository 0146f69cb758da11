package e2e

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"regexp"
	"testing"

	"github.com/andybalholm/brotli"
)

// TestDesk_Brotli: the real server sends its HTML and its static CSS and
// JavaScript brotli-compressed to a client that accepts br, gzipped to one
// that accepts only gzip, and the same bytes either way.
func TestDesk_Brotli(t *testing.T) {
	s, _ := deskServer(t)
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	get := func(path, accept string) ([]byte, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", s.URL+path, nil)
		if accept != "" {
			req.Header.Set("Accept-Encoding", accept)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %v", path, resp.StatusCode, err)
		}
		var r io.Reader = bytes.NewReader(raw)
		switch enc := resp.Header.Get("Content-Encoding"); enc {
		case "br":
			r = brotli.NewReader(r)
		case "gzip":
			if r, err = gzip.NewReader(r); err != nil {
				t.Fatal(err)
			}
		}
		body, err := io.ReadAll(r)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		t.Logf("%s, %q: %d bytes sent for %d", path, accept, len(raw), len(body))
		return body, resp.Header.Get("Content-Encoding")
	}
	page, _ := get("/auth/signed-out", "")
	paths := []string{"/auth/signed-out"}
	for _, m := range regexp.MustCompile(`(?:href|src)="(/static/[^"]+)"`).FindAllStringSubmatch(string(page), -1) {
		paths = append(paths, m[1])
	}
	if len(paths) < 3 {
		t.Fatalf("the page names no stylesheet and script: %v", paths)
	}
	for _, path := range paths {
		plain, enc := get(path, "")
		if enc != "" {
			t.Errorf("%s without Accept-Encoding: %q", path, enc)
		}
		br, enc := get(path, "gzip, deflate, br, zstd")
		if enc != "br" {
			t.Errorf("%s to a client that accepts br: Content-Encoding %q", path, enc)
		}
		gz, enc := get(path, "gzip, deflate")
		if enc != "gzip" {
			t.Errorf("%s to a client that accepts gzip: Content-Encoding %q", path, enc)
		}
		if path != "/auth/signed-out" && (!bytes.Equal(br, plain) || !bytes.Equal(gz, plain)) {
			t.Errorf("%s: the compressed files differ from the plain one", path)
		}
	}
}
