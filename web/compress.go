package web

import (
	"compress/gzip"
	"net/http"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"
)

// compress gzips pages, fragments and the static CSS and JavaScript for a
// browser that accepts it: the queue's HTML is mostly repeated markup. A
// range request, an answer without a body and anything else (an audit
// export streams as it is read) go as they are.
func compress(c *gin.Context) {
	if !acceptsGzip(c.GetHeader("Accept-Encoding")) || c.GetHeader("Range") != "" {
		c.Next()
		return
	}
	w := &gzipWriter{ResponseWriter: c.Writer}
	c.Writer = w
	defer w.close()
	c.Writer.Header().Add("Vary", "Accept-Encoding")
	c.Next()
}

func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		name, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") {
			return strings.ReplaceAll(q, " ", "") != "q=0"
		}
	}
	return false
}

// compressible are the content types worth compressing.
var compressible = []string{"text/html", "text/css", "text/javascript", "application/javascript", "image/svg+xml"}

var gzipPool = sync.Pool{New: func() any { w, _ := gzip.NewWriterLevel(nil, gzip.DefaultCompression); return w }}

// gzipWriter decides at the first byte of the body whether to compress it.
type gzipWriter struct {
	gin.ResponseWriter
	gz      *gzip.Writer
	decided bool
}

func (w *gzipWriter) decide() {
	if w.decided {
		return
	}
	w.decided = true
	h := w.Header()
	ct := h.Get("Content-Type")
	status := w.Status()
	if h.Get("Content-Encoding") != "" || status == http.StatusNoContent || status == http.StatusNotModified ||
		status == http.StatusPartialContent || !hasPrefixAny(ct, compressible) {
		return
	}
	h.Set("Content-Encoding", "gzip")
	h.Del("Content-Length")
	gz := gzipPool.Get().(*gzip.Writer)
	gz.Reset(w.ResponseWriter)
	w.gz = gz
}

func hasPrefixAny(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func (w *gzipWriter) Write(b []byte) (int, error) {
	w.decide()
	if w.gz == nil {
		return w.ResponseWriter.Write(b)
	}
	return w.gz.Write(b)
}

func (w *gzipWriter) WriteString(s string) (int, error) { return w.Write([]byte(s)) }

// Flush sends what is compressed so far.
func (w *gzipWriter) Flush() {
	if w.gz != nil {
		_ = w.gz.Flush()
	}
	w.ResponseWriter.Flush()
}

func (w *gzipWriter) close() {
	if w.gz == nil {
		return
	}
	_ = w.gz.Close()
	w.gz.Reset(nil)
	gzipPool.Put(w.gz)
	w.gz = nil
}
