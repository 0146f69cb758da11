package store_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/opshandoff/handoff/store"
)

// TestSQLite_FilesArePrivate: handoff.db, -wal and -shm are created 0600
// under the usual umask 022 and under none at all.
func TestSQLite_FilesArePrivate(t *testing.T) {
	for _, mask := range []int{0o022, 0o000} {
		old := syscall.Umask(mask)
		path := filepath.Join(t.TempDir(), "handoff.db")
		s, err := store.Open(context.Background(), "sqlite://"+path)
		syscall.Umask(old)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{path, path + "-wal", path + "-shm"} {
			fi, err := os.Stat(f)
			if err != nil {
				t.Fatalf("umask %03o: %v", mask, err)
			}
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("umask %03o: %s is %s, want -rw-------", mask, filepath.Base(f), fi.Mode().Perm())
			}
		}
		s.Close()
	}
}

// TestSQLite_WarnsWhenOthersCanRead: opening a database file others can
// read logs a warning naming it; a private one does not.
func TestSQLite_WarnsWhenOthersCanRead(t *testing.T) {
	var logs bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn})))
	defer slog.SetDefault(prev)

	path := filepath.Join(t.TempDir(), "handoff.db")
	s, err := store.Open(context.Background(), "sqlite://"+path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if strings.Contains(logs.String(), "readable") {
		t.Fatalf("a private database warned: %s", logs.String())
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err = store.Open(context.Background(), "sqlite://"+path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), path) || !strings.Contains(logs.String(), "chmod 600") {
		t.Fatalf("no warning naming %s: %s", path, logs.String())
	}
}
