// Package static embeds the desk's stylesheet, scripts and vendored htmx,
// and names each file by a hash of its content so it can be cached forever.
package static

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"path"
	"strings"
	"sync"
)

//go:embed css js
var files embed.FS

// FS is the embedded files, by their plain names (css/app.css).
var FS fs.FS = files

var (
	hashOnce sync.Once
	hashed   map[string]string // plain name → name with content hash
	plain    map[string]string // name with content hash → plain name
)

func index() {
	hashed, plain = map[string]string{}, map[string]string{}
	_ = fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(files, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		ext := path.Ext(p)
		h := strings.TrimSuffix(p, ext) + "." + hex.EncodeToString(sum[:])[:12] + ext
		hashed[p], plain[h] = h, p
		return nil
	})
}

// URL is the content-hashed URL of an embedded file: URL("css/app.css") is
// "/static/css/app.3f2a…css".
func URL(name string) string {
	hashOnce.Do(index)
	if h, ok := hashed[name]; ok {
		return "/static/" + h
	}
	return "/static/" + name
}

// Resolve maps a content-hashed name back to the embedded file's name.
func Resolve(hashedName string) (string, bool) {
	hashOnce.Do(index)
	p, ok := plain[hashedName]
	return p, ok
}
