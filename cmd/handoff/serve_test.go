package main

import "testing"

func TestDeskURL(t *testing.T) {
	for _, c := range []struct{ public, addr, want string }{
		{"", "127.0.0.1:8080", "http://127.0.0.1:8080/desk"},
		{"http://127.0.0.1:8080", "127.0.0.1:8080", "http://127.0.0.1:8080/desk"},
		{"http://0.0.0.0:8080", "0.0.0.0:8080", "http://localhost:8080/desk"},
		{"", ":9000", "http://localhost:9000/desk"},
		{"http://[::]:9000", "[::]:9000", "http://localhost:9000/desk"},
		{"https://handoff.example.com/", "0.0.0.0:8080", "https://handoff.example.com/desk"},
	} {
		if got := deskURL(c.public, c.addr); got != c.want {
			t.Errorf("deskURL(%q, %q) = %q, want %q", c.public, c.addr, got, c.want)
		}
	}
}
