package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"
)

// A poster sends one call and returns its status and body. The body is
// valid until the next call.
type poster interface {
	post(path string, body []byte) (int, []byte, error)
	close()
}

// newPoster is one client's way to a replica: plain HTTP by hand (rawConn),
// HTTPS through net/http.
func newPoster(base, token string, hc *http.Client) (poster, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	switch u.Scheme {
	case "http":
		host := u.Host
		if u.Port() == "" {
			host = net.JoinHostPort(u.Hostname(), "80")
		}
		return &rawConn{addr: host, prefix: u.Path, head: []byte("Host: " + u.Host + "\r\nAuthorization: Bearer " + token +
			"\r\nContent-Type: application/json\r\nContent-Length: ")}, nil
	case "https":
		return &stdPoster{client: hc, base: base, token: token}, nil
	}
	return nil, fmt.Errorf("%s: the URL's scheme is neither http nor https", base)
}

// rawConn is one client's keep-alive HTTP/1.1 connection, spoken by hand
// on the client's own goroutine: the request in one write, the answer
// read as it comes. net/http's Transport hands each request to a writer
// goroutine and each answer back from a reader goroutine — two wake-ups a
// call, on the cores the driver shares with the server and PostgreSQL,
// which at 8 clients cost the server more than the driver's own work.
// Only what a Handoff replica sends is read: a status line, headers, and
// a body by Content-Length or chunked; anything else is an error, and an
// error drops the connection (the next call dials again, nothing is sent
// twice).
type rawConn struct {
	addr   string // host:port to dial
	prefix string // the base URL's path
	head   []byte // the headers every call sends, up to Content-Length's value
	c      net.Conn
	r      *bufio.Reader
	req    []byte // the request being written
	body   []byte // the last answer's body
}

const callTimeout = 30 * time.Second

func (k *rawConn) post(path string, body []byte) (int, []byte, error) {
	if k.c == nil {
		c, err := net.DialTimeout("tcp", k.addr, callTimeout)
		if err != nil {
			return 0, nil, err
		}
		k.c, k.r = c, bufio.NewReaderSize(c, 8<<10)
	}
	req := append(k.req[:0], "POST "...)
	req = append(req, k.prefix...)
	req = append(req, path...)
	req = append(req, " HTTP/1.1\r\n"...)
	req = append(req, k.head...)
	req = strconv.AppendInt(req, int64(len(body)), 10)
	req = append(req, "\r\n\r\n"...)
	req = append(req, body...)
	k.req = req
	_ = k.c.SetDeadline(time.Now().Add(callTimeout))
	status, keep, err := k.exchange(req)
	if err != nil || !keep {
		k.close()
	}
	return status, k.body, err
}

func (k *rawConn) close() {
	if k.c != nil {
		k.c.Close()
		k.c, k.r = nil, nil
	}
}

// exchange writes the request and reads its answer into k.body; keep is
// whether the connection may carry the next call.
func (k *rawConn) exchange(req []byte) (status int, keep bool, err error) {
	if _, err := k.c.Write(req); err != nil {
		return 0, false, err
	}
	for {
		status, keep, length, chunked, err := readHead(k.r)
		if err != nil {
			return 0, false, err
		}
		if status >= 100 && status < 200 {
			continue // an interim answer; the real one follows
		}
		if status == http.StatusNoContent || status == http.StatusNotModified {
			length, chunked = 0, false
		}
		k.body, err = readBody(k.r, k.body[:0], length, chunked)
		return status, keep && err == nil, err
	}
}

var errAnswer = errors.New("an answer the driver does not read")

// readHead reads a status line and the headers: the status, whether the
// connection stays open, and how the body is framed (length -1: none
// given).
func readHead(r *bufio.Reader) (status int, keep bool, length int64, chunked bool, err error) {
	line, err := readLine(r)
	if err != nil {
		return 0, false, 0, false, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return 0, false, 0, false, fmt.Errorf("%w: status line %q", errAnswer, line)
	}
	status, err = strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, false, 0, false, fmt.Errorf("%w: status line %q", errAnswer, line)
	}
	keep, length = line[7] == '1', -1
	for {
		line, err := readLine(r)
		if err != nil {
			return 0, false, 0, false, err
		}
		if len(line) == 0 {
			return status, keep, length, chunked, nil
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return 0, false, 0, false, fmt.Errorf("%w: header %q", errAnswer, line)
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.ParseInt(string(value), 10, 64); err != nil || length < 0 {
				return 0, false, 0, false, fmt.Errorf("%w: Content-Length %q", errAnswer, value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			if !bytes.EqualFold(value, []byte("chunked")) {
				return 0, false, 0, false, fmt.Errorf("%w: Transfer-Encoding %q", errAnswer, value)
			}
			chunked = true
		case bytes.EqualFold(name, []byte("Connection")):
			if bytes.EqualFold(value, []byte("close")) {
				keep = false
			}
		}
	}
}

// readBody appends the body framed as the headers said: chunked, a
// length, or (neither) up to the end of the connection.
func readBody(r *bufio.Reader, dst []byte, length int64, chunked bool) ([]byte, error) {
	switch {
	case chunked:
		for {
			line, err := readLine(r)
			if err != nil {
				return dst, err
			}
			size, _, _ := bytes.Cut(line, []byte(";"))
			n, err := strconv.ParseInt(string(bytes.TrimSpace(size)), 16, 64)
			if err != nil || n < 0 {
				return dst, fmt.Errorf("%w: chunk size %q", errAnswer, line)
			}
			if n == 0 {
				for { // trailers, then the blank line
					if line, err = readLine(r); err != nil || len(line) == 0 {
						return dst, err
					}
				}
			}
			if dst, err = readN(r, dst, n); err != nil {
				return dst, err
			}
			if line, err = readLine(r); err != nil || len(line) != 0 {
				return dst, errors.Join(err, fmt.Errorf("%w: no CRLF after a chunk", errAnswer))
			}
		}
	case length >= 0:
		return readN(r, dst, length)
	default:
		b, err := io.ReadAll(r)
		return append(dst, b...), err
	}
}

// readN appends n bytes read from r, into dst's own room when it has it:
// the answers' buffer is reused from call to call.
func readN(r io.Reader, dst []byte, n int64) ([]byte, error) {
	start := len(dst)
	dst = slices.Grow(dst, int(n))[:start+int(n)]
	_, err := io.ReadFull(r, dst[start:])
	return dst, err
}

// readLine is one line without its CRLF (or LF). It is valid until the
// next read.
func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		return nil, fmt.Errorf("%w: a line longer than %d bytes", errAnswer, r.Size())
	}
	if err != nil {
		if err == io.EOF && len(line) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

// stdPoster is net/http's client, for HTTPS.
type stdPoster struct {
	client      *http.Client
	base, token string
}

func (p *stdPoster) post(path string, body []byte) (int, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, p.base+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+p.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, data, err
}

func (p *stdPoster) close() {}
