package pages

import (
	"time"

	"github.com/opshandoff/handoff/views/components"
)

// TwinView sets an operation held as a possible second execution
// (twin_unresolved, supersedes_sent) beside the operation it may repeat, so
// that a person compares the two before deciding: approving runs the held
// one although the other may have acted.
type TwinView struct {
	Code, Why string // the hold's code and message
	// This and Other are the held operation and its twin.
	This, Other TwinSide
	// Missing says the twin cannot be shown: the viewer may not open it,
	// or it is gone. The hold's message still names it.
	Missing string
	// Same says the two contents are identical (same SHA-256); otherwise
	// Diff is the held one's content against the twin's.
	Same          bool
	Diff          []components.DiffLine
	DiffTruncated bool
	// ContentHidden says the viewer may not read the content: neither the
	// contents nor their difference are shown.
	ContentHidden bool
}

// TwinSide is one of the two operations.
type TwinSide struct {
	ID, Key, State, ProviderKey, ContentSHA256 string
	ContentVersion, Attempts                   int
	SentAt                                     *time.Time // when its provider key was first sent; nil for never
	CreatedAt                                  time.Time
}
