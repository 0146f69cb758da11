package e2e

import (
	"os"
	"testing"
)

// TestMain stops the browser the desk's tests share once every test has
// run.
func TestMain(m *testing.M) {
	code := m.Run()
	chromium.mu.Lock()
	stopChromium()
	chromium.mu.Unlock()
	os.Exit(code)
}
