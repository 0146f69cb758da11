package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// procStatusKB reads a memory figure (VmRSS, VmHWM) of a process in kB.
func procStatusKB(t *testing.T, pid int, field string) int64 {
	t.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("%s: %q", field, line)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// postRaw sends a request over its own connection and returns the status
// of the answer, which the server may send, and then close the connection,
// before the body has been written: the answer is read while writing.
func postRaw(t *testing.T, addr, head string, body []byte) int {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Error(err)
		return 0
	}
	defer conn.Close()
	go func() {
		_, _ = conn.Write([]byte(head))
		_, _ = conn.Write(body) // cut off by the server's refusal
	}()
	_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Errorf("reading the answer: %v", err)
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestDesk_LargeUnauthenticatedPostsStayCheap: twenty 40 MB decision posts
// from a stranger at once — multipart with one huge part, and url-encoded
// sent chunked so no Content-Length gives them away — are each refused
// with 413, and the server's resident memory never passes 200 MB.
func TestDesk_LargeUnauthenticatedPostsStayCheap(t *testing.T) {
	const posts, size, limitKB = 20, 40 << 20, 200 << 10
	s := startServer(t)

	var mp bytes.Buffer
	w := multipart.NewWriter(&mp)
	part, _ := w.CreateFormField("reason")
	_, _ = part.Write(bytes.Repeat([]byte("r"), size))
	_ = w.Close()
	encoded := append([]byte("form=note&reason="), bytes.Repeat([]byte("r"), size)...)

	addr := strings.TrimPrefix(s.URL, "http://")
	statuses := make([]int, posts)
	var wg sync.WaitGroup
	for i := range posts {
		wg.Go(func() {
			head := "POST /desk/operations/op_x/notes HTTP/1.1\r\nHost: " + addr + "\r\nOrigin: " + s.URL + "\r\n"
			body := mp.Bytes()
			if i%2 == 0 {
				head += "Content-Type: " + w.FormDataContentType() + "\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
			} else {
				// Chunked, one chunk: the length is not known up front.
				body = encoded
				head += "Content-Type: application/x-www-form-urlencoded\r\nTransfer-Encoding: chunked\r\n\r\n" +
					strconv.FormatInt(int64(len(body)), 16) + "\r\n"
			}
			statuses[i] = postRaw(t, addr, head, body)
		})
	}
	wg.Wait()
	for i, st := range statuses {
		if st != http.StatusRequestEntityTooLarge {
			t.Errorf("post %d: status %d, want 413", i, st)
		}
	}
	if peak := procStatusKB(t, s.pid, "VmHWM"); peak > limitKB {
		t.Errorf("the server's resident memory peaked at %d MB, want under 200 MB", peak>>10)
	} else {
		t.Logf("peak resident memory %d MB, now %d MB", peak>>10, procStatusKB(t, s.pid, "VmRSS")>>10)
	}
}
