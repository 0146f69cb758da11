package main

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"pgregory.net/rapid"
)

// The hand-spoken connection reads what net/http's server writes — a body
// by Content-Length or chunked, no body, an interim 100, a connection
// closed after the answer — as the status and body the handler wrote, and
// sends the path, the headers and the body the handler reads, call after
// call on one client.
func TestRawConn_readsWhatNetHTTPWrites(t *testing.T) {
	type answer struct {
		status  int
		body    []byte
		pieces  int  // > 1: written in pieces, flushed (chunked)
		length  bool // Content-Length set by the handler
		closing bool // Connection: close
		interim bool // a 100 Continue first
	}
	var next atomic.Pointer[answer]
	var got struct{ path, auth, ctype, body string }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := next.Load()
		b, _ := io.ReadAll(r.Body)
		got.path, got.auth, got.ctype, got.body = r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("Content-Type"), string(b)
		if a.interim {
			w.WriteHeader(http.StatusContinue)
		}
		if a.closing {
			w.Header().Set("Connection", "close")
		}
		if a.length {
			w.Header().Set("Content-Length", strconv.Itoa(len(a.body)))
		}
		w.WriteHeader(a.status)
		if a.pieces <= 1 {
			w.Write(a.body)
			return
		}
		step := len(a.body)/a.pieces + 1
		for b := a.body; len(b) > 0; {
			n := min(step, len(b))
			w.Write(b[:n])
			w.(http.Flusher).Flush()
			b = b[n:]
		}
	}))
	defer srv.Close()
	p, err := newPoster(srv.URL, "hnd_secret", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	rapid.Check(t, func(t *rapid.T) {
		a := &answer{
			status:  rapid.SampledFrom([]int{200, 201, 204, 400, 409, 503}).Draw(t, "status"),
			body:    []byte(rapid.StringN(0, 9000, -1).Draw(t, "body")),
			pieces:  rapid.IntRange(1, 5).Draw(t, "pieces"),
			length:  rapid.Bool().Draw(t, "length"),
			closing: rapid.Bool().Draw(t, "closing"),
			interim: rapid.Bool().Draw(t, "interim"),
		}
		if a.status == http.StatusNoContent {
			a.body, a.length = nil, false
		}
		if a.length {
			a.pieces = 1
		}
		next.Store(a)
		path := "/v1/operations/" + rapid.StringMatching(`op_[a-z0-9]{1,12}`).Draw(t, "id") + "/settle"
		sent := []byte(rapid.StringN(0, 3000, -1).Draw(t, "sent"))
		status, body, err := p.post(path, sent)
		if err != nil {
			t.Fatalf("post: %v", err)
		}
		if status != a.status || !bytes.Equal(body, a.body) {
			t.Fatalf("got %d %q, the handler wrote %d %q", status, body, a.status, a.body)
		}
		if got.path != path || got.auth != "Bearer hnd_secret" || got.ctype != "application/json" || got.body != string(sent) {
			t.Fatalf("the server read %+v", got)
		}
	})
}

// A connection that breaks mid-answer is an error for that call, and the
// next call dials again.
func TestRawConn_brokenAnswerThenRedials(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int64
	go func() {
		for n := 0; ; n++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			go func() {
				defer c.Close()
				buf := make([]byte, 4096)
				c.Read(buf)
				if n == 0 {
					io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
					return
				}
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
			}()
		}
	}()
	p, err := newPoster("http://"+ln.Addr().String(), "t", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	if _, _, err := p.post("/v1/operations", []byte("{}")); err == nil {
		t.Fatal("a cut answer read without an error")
	}
	status, body, err := p.post("/v1/operations", []byte("{}"))
	if err != nil || status != 200 || string(body) != "ok" || accepted.Load() != 2 {
		t.Fatalf("after the cut: %d %q %v, %d connections", status, body, err, accepted.Load())
	}
	if _, err := newPoster("ftp://x", "t", nil); err == nil || !strings.Contains(err.Error(), "scheme") {
		t.Fatalf("an ftp URL: %v", err)
	}
}
