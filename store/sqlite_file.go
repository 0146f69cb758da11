package store

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
)

// The embedded database holds content, the audit trail and the hashes of
// tokens and sessions: its files are the owner's alone.

// sqliteSuffixes are the database file and the two SQLite keeps beside it
// in WAL mode.
var sqliteSuffixes = []string{"", "-wal", "-shm"}

// prepareSQLiteFiles creates the database file 0600 whatever the umask, so
// SQLite — which gives the -wal and -shm files the database file's mode —
// creates those 0600 too. Files that already exist are left as they are,
// and each one others can read is returned for a warning.
func prepareSQLiteFiles(path string) (exposed []string, err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case err == nil:
		f.Close()
		if err := os.Chmod(path, 0o600); err != nil { // the umask may have taken bits
			return nil, err
		}
	case !errors.Is(err, fs.ErrExist):
		return nil, err
	}
	for _, suffix := range sqliteSuffixes {
		fi, err := os.Stat(path + suffix)
		if err == nil && fi.Mode().Perm()&0o077 != 0 {
			exposed = append(exposed, fmt.Sprintf("%s (%s)", path+suffix, fi.Mode().Perm()))
		}
	}
	return exposed, nil
}

// warnExposed logs each database file that others can read.
func warnExposed(exposed []string) {
	for _, f := range exposed {
		slog.Warn("the SQLite database file is readable by other users; it holds content, the audit trail and "+
			"token and session hashes — restrict it with chmod 600", "file", f)
	}
}
