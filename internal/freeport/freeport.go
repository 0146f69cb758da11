// Package freeport picks a loopback port for a server a test is about to
// start in another process. A port the kernel hands out for ":0" is free
// only until the next listener or outgoing connection on the machine takes
// it from the same ephemeral range, and with several test processes at
// once one did, between the test's close and the server's bind. The ports
// below that range are never handed out: another process takes one only
// by choosing it, as this package does, at random.
package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// lowest is the first port chosen from; the few services of a machine
// that listen above it are skipped by trying each choice.
const lowest = 10000

// Addr is host:port for a port on host that was free a moment ago.
func Addr(host string) (string, error) {
	if hi := ephemeralStart(); hi-lowest >= 1000 {
		for range 50 {
			port := lowest + rand.IntN(hi-lowest)
			ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
			if err == nil {
				ln.Close()
				return net.JoinHostPort(host, strconv.Itoa(port)), nil
			}
		}
	}
	// No room below the ephemeral range (or none of it free): what the
	// kernel gives, with the race the range avoids.
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return "", err
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return net.JoinHostPort(host, port), nil
}

// Port is Addr's port.
func Port(host string) (int, error) {
	addr, err := Addr(host)
	if err != nil {
		return 0, err
	}
	_, port, _ := net.SplitHostPort(addr)
	return strconv.Atoi(port)
}

// ephemeralStart is the first port of Linux's ephemeral range, 32768 where
// it cannot be read.
func ephemeralStart() int {
	raw, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	var lo, hi int
	if _, err := fmt.Sscan(strings.TrimSpace(string(raw)), &lo, &hi); err != nil || lo <= 0 {
		return 32768
	}
	return lo
}
