package cards_test

import (
	"os"
	"strings"
	"testing"
)

// TestGuideExampleCard: the card the card-writing guide shows loads, and
// says what the guide says of it.
func TestGuideExampleCard(t *testing.T) {
	guide, err := os.ReadFile("../docs/guides/cards.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(guide), "```yaml\n")[1:]
	if len(blocks) != 1 {
		t.Fatalf("%d yaml blocks in the guide, want 1", len(blocks))
	}
	block, _, _ := strings.Cut(blocks[0], "```")
	cs, err := loadString(t, block)
	if err != nil {
		t.Fatalf("the guide's card does not load:\n%s\n%v", block, err)
	}
	c, err := cs.Get("invoice.create")
	if err != nil {
		t.Fatal(err)
	}
	if c.LookupAuthoritative || len(c.Unverified) == 0 {
		t.Errorf("the guide's card should claim no authoritative lookup and keep an open question: %+v", c)
	}
}
