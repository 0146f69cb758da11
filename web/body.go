package web

import (
	"errors"
	"mime"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
)

// MaxFormBytes bounds a desk or sign-in form: far above the largest form
// the desk offers (a 64 KiB content revision, a batch of a thousand items),
// far below what a stranger could make the server hold.
const MaxFormBytes = 1 << 20

// limitBody guards every desk and sign-in route before anything reads the
// body — the expired-session keeper reads the form without a session, so
// the guard must not wait for one. A body over MaxFormBytes is refused
// with 413 (by its Content-Length, or while it is read); the desk's forms
// are url-encoded, so a multipart body, which Go would spool to memory and
// temporary files, is refused with 415. The form is parsed here, under the
// bound, so no handler parses an unbounded one later.
func limitBody(c *gin.Context) {
	r := c.Request
	if r.ContentLength > MaxFormBytes {
		refuseBody(c, http.StatusRequestEntityTooLarge)
		return
	}
	if r.Body == nil || r.Body == http.NoBody {
		c.Next()
		return
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); strings.HasPrefix(mt, "multipart/") {
		refuseBody(c, http.StatusUnsupportedMediaType)
		return
	}
	r.Body = http.MaxBytesReader(c.Writer, r.Body, MaxFormBytes)
	if err := r.ParseForm(); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			refuseBody(c, http.StatusRequestEntityTooLarge)
			return
		}
		refuseBody(c, http.StatusBadRequest)
		return
	}
	c.Next()
}

// refuseBody answers a form the desk will not read. The connection is
// closed: what is left of the body is not worth reading.
func refuseBody(c *gin.Context, status int) {
	msg := map[int]string{
		http.StatusRequestEntityTooLarge: "Refused: the form is larger than 1 MB.",
		http.StatusUnsupportedMediaType:  "Refused: the desk's forms are sent url-encoded, not as multipart.",
		http.StatusBadRequest:            "Refused: the form could not be read.",
	}[status]
	c.Header("Connection", "close")
	c.Header("Cache-Control", "no-store")
	c.String(status, msg)
	c.Abort()
}
