package pages

// DrillView is what the Types page says about a type's drills.
type DrillView struct {
	// Status is "drilled", "not drilled" (never, or the card changed since
	// its last passing drill) or "" when drills are not tracked.
	Status string
	// Last is the last drill: when, its verdict and its receipt.
	LastAt, LastVerdict, ReceiptURL, ReceiptSHA256 string
	// Why says why a type counts as not drilled.
	Why string
}
