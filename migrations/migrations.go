// Package migrations holds the numbered SQL migrations of each dialect,
// embedded in the binary. The store runs them with goose at start-up, under
// a lock, and `handoff migrate` runs them on demand. One file per change per
// dialect; never AutoMigrate.
package migrations

import (
	"embed"
	"io/fs"
)

//go:embed postgres/*.sql sqlite/*.sql
var files embed.FS

// For returns the migrations of a dialect: "postgres" or "sqlite".
func For(dialect string) (fs.FS, error) {
	return fs.Sub(files, dialect)
}
