package web

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/static"
)

// Pages and static CSS and JavaScript go gzipped to a browser that accepts
// it, and as they are to one that does not; an export is never held back.
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
	for _, target := range []string{"/desk/queue", static.URL("css/app.css"), static.URL("js/desk.js")} {
		plain := get(target, "")
		zipped := get(target, "br, gzip;q=0.9")
		if plain.Code != 200 || zipped.Code != 200 || plain.Header().Get("Content-Encoding") != "" ||
			zipped.Header().Get("Content-Encoding") != "gzip" || zipped.Header().Get("Content-Length") != "" {
			t.Fatalf("%s: %d %q, %d %q", target, plain.Code, plain.Header().Get("Content-Encoding"), zipped.Code,
				zipped.Header().Get("Content-Encoding"))
		}
		r, err := gzip.NewReader(zipped.Body)
		if err != nil {
			t.Fatal(err)
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
}
