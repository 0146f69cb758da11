package pages

import (
	"time"

	"github.com/opshandoff/handoff/views/components"
	"github.com/opshandoff/handoff/views/layouts"
)

// ApprovalsView lists the operations awaiting approval.
type ApprovalsView struct {
	Frame      layouts.Frame
	Items      []ApprovalItem
	Next       string
	CanApprove bool // the viewer has the approver role
}

// ApprovalItem is one content version to approve or reject.
type ApprovalItem struct {
	ID, Key, Type, Namespace, Author, Reason, SHA256 string
	Version                                          int64
	ContentVersion                                   int
	CreatedAt                                        time.Time
	Own                                              bool                  // the viewer made this version
	Diff                                             []components.DiffLine // against the previous version, or the whole content
	First                                            bool                  // no previous version: Diff is the whole content
	DiffTruncated                                    bool                  // Diff is cut: Download has the version
	Download                                         string                // the version as a JSON file
	HiddenFrom                                       string                // the role the card shows content to, when the viewer is below it
	Bytes                                            int                   // the content's size, when hidden
	Hidden                                           []rune                // the hidden characters the content holds
	Twin                                             *TwinView             // the operation it may be a second execution of
}
