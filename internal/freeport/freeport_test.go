package freeport

import (
	"net"
	"strconv"
	"testing"
)

// TestAddr: the address is below the ephemeral range, where the kernel
// never hands a port to another listener or connection, and free.
func TestAddr(t *testing.T) {
	hi := ephemeralStart()
	if hi-lowest < 1000 {
		t.Skipf("the ephemeral range starts at %d: no room below it", hi)
	}
	for range 20 {
		addr, err := Addr("127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		_, p, _ := net.SplitHostPort(addr)
		port, _ := strconv.Atoi(p)
		if port < lowest || port >= hi {
			t.Fatalf("port %d, want one in [%d, %d)", port, lowest, hi)
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("the address given is not free: %v", err)
		}
		ln.Close()
	}
}
