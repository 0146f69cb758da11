package web

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/static"
)

// Pages and static CSS and JavaScript go brotli-compressed to a browser that
// accepts brotli, gzipped to one that accepts only gzip, and as they are to
// one that accepts neither; an export is never held back.
func TestCompress(t *testing.T) {
	d := newDesk(t)
	d.engine.GET("/static/*file", serveStatic)
	d.engine.GET("/export.csv", func(c *gin.Context) { c.Data(http.StatusOK, "text/csv", []byte(strings.Repeat("a,b\n", 500))) })
	d.intoDesk("evt_1:crm_task", true)
	get := func(target, enc string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", target, nil)
		req.Header.Set("X-Test-Person", "ada")
		if enc != "" {
			req.Header.Set("Accept-Encoding", enc)
		}
		w := httptest.NewRecorder()
		d.engine.ServeHTTP(w, req)
		return w
	}
	for _, c := range []struct{ target, accept, want string }{
		{"/desk/queue", "gzip, deflate, br, zstd", "br"}, {static.URL("css/app.css"), "br;q=1.0, gzip;q=0.8", "br"},
		{static.URL("js/desk.js"), "gzip, br", "br"}, {"/desk/queue", "br;q=0, gzip", "gzip"},
		{static.URL("css/app.css"), "gzip, deflate", "gzip"}, {static.URL("js/desk.js"), "gzip", "gzip"},
	} {
		target := c.target
		plain := get(target, "")
		zipped := get(target, c.accept)
		if plain.Code != 200 || zipped.Code != 200 || plain.Header().Get("Content-Encoding") != "" ||
			zipped.Header().Get("Content-Encoding") != c.want || zipped.Header().Get("Content-Length") != "" {
			t.Fatalf("%s, %s: %d %q, %d %q", target, c.accept, plain.Code, plain.Header().Get("Content-Encoding"), zipped.Code,
				zipped.Header().Get("Content-Encoding"))
		}
		var r io.Reader = brotli.NewReader(zipped.Body)
		if c.want == "gzip" {
			gz, err := gzip.NewReader(zipped.Body)
			if err != nil {
				t.Fatal(err)
			}
			r = gz
		}
		body, err := io.ReadAll(r)
		if err != nil || len(body) < 100 || zipped.Body.Len() >= len(body) {
			t.Fatalf("%s: %d bytes zipped to %d: %v", target, len(body), zipped.Body.Len(), err)
		}
		if target == "/desk/queue" && !strings.Contains(string(body), "evt_1:crm_task") {
			t.Fatalf("the zipped queue lacks its item")
		}
		if !strings.HasPrefix(target, "/desk") && string(body) != plain.Body.String() {
			t.Fatalf("%s: the zipped file differs", target)
		}
	}
	if w := get("/export.csv", "gzip"); w.Header().Get("Content-Encoding") != "" {
		t.Fatal("an export was compressed")
	}
	if w := get("/desk/queue", "gzip;q=0"); w.Header().Get("Content-Encoding") != "" {
		t.Fatal("compressed for a browser that refuses gzip")
	}
	if w := get("/desk/queue", "br;q=0, gzip;q=0.0"); w.Header().Get("Content-Encoding") != "" {
		t.Fatal("compressed for a browser that refuses both")
	}
}
