package web

import (
	"compress/gzip"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/andybalholm/brotli"
	"github.com/gin-gonic/gin"
)

// compress sends pages, fragments and the static CSS and JavaScript
// compressed for a browser that accepts it — brotli when it accepts that,
// else gzip: the queue's HTML is mostly repeated markup. A range request,
// an answer without a body and anything else (an audit export streams as
// it is read) go as they are.
func compress(c *gin.Context) {
	enc := chooseEncoding(c.GetHeader("Accept-Encoding"))
	if enc == nil || c.GetHeader("Range") != "" {
		c.Next()
		return
	}
	w := &compressWriter{ResponseWriter: c.Writer, enc: enc}
	c.Writer = w
	defer w.close()
	c.Writer.Header().Add("Vary", "Accept-Encoding")
	c.Next()
}

// encoder is a compressing writer that can be reset onto another writer
// and kept in a pool: gzip's and brotli's both are.
type encoder interface {
	io.Writer
	Flush() error
	Close() error
	Reset(io.Writer)
}

// encoding is one Content-Encoding the desk sends, and its writers.
type encoding struct {
	name string
	pool sync.Pool
}

var (
	// Brotli at level 5 compresses a page better than gzip's default at
	// about its speed; the higher levels cost far more time per page.
	brotliEncoding = &encoding{name: "br", pool: sync.Pool{New: func() any { return brotli.NewWriterLevel(nil, 5) }}}
	gzipEncoding   = &encoding{name: "gzip", pool: sync.Pool{New: func() any { w, _ := gzip.NewWriterLevel(nil, gzip.DefaultCompression); return w }}}
)

// chooseEncoding reads Accept-Encoding: brotli when the browser accepts
// it, else gzip, else nil. A coding with q=0 is refused; otherwise the
// weights are not compared, as every browser that sends br prefers it.
func chooseEncoding(header string) *encoding {
	var br, gz bool
	for _, part := range strings.Split(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		ok := acceptable(params)
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "br":
			br = ok
		case "gzip":
			gz = ok
		}
	}
	switch {
	case br:
		return brotliEncoding
	case gz:
		return gzipEncoding
	}
	return nil
}

// acceptable reads a coding's parameters: refused only by a weight of 0.
func acceptable(params string) bool {
	for _, p := range strings.Split(params, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		if strings.EqualFold(strings.TrimSpace(k), "q") {
			q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return err != nil || q > 0
		}
	}
	return true
}

// compressible are the content types worth compressing.
var compressible = []string{"text/html", "text/css", "text/javascript", "application/javascript", "image/svg+xml"}

// compressWriter decides at the first byte of the body whether to
// compress it.
type compressWriter struct {
	gin.ResponseWriter
	enc     *encoding
	w       encoder
	decided bool
}

func (w *compressWriter) decide() {
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
	h.Set("Content-Encoding", w.enc.name)
	h.Del("Content-Length")
	e := w.enc.pool.Get().(encoder)
	e.Reset(w.ResponseWriter)
	w.w = e
}

func hasPrefixAny(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func (w *compressWriter) Write(b []byte) (int, error) {
	w.decide()
	if w.w == nil {
		return w.ResponseWriter.Write(b)
	}
	return w.w.Write(b)
}

func (w *compressWriter) WriteString(s string) (int, error) { return w.Write([]byte(s)) }

// Flush sends what is compressed so far.
func (w *compressWriter) Flush() {
	if w.w != nil {
		_ = w.w.Flush()
	}
	w.ResponseWriter.Flush()
}

func (w *compressWriter) close() {
	if w.w == nil {
		return
	}
	_ = w.w.Close()
	w.w.Reset(nil)
	w.enc.pool.Put(w.w)
	w.w = nil
}
