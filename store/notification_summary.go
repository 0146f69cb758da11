package store

import (
	"encoding/json"

	"github.com/opshandoff/handoff/domain"
)

// encodeSummary is the summary column of a notification: the summary's
// JSON as domain.NotificationSummary spells it.
func encodeSummary(s domain.NotificationSummary) string {
	// json.Marshal fails only on content that is not JSON, which the
	// ledger never accepts; the column is then empty, and delivery reports
	// it unreadable.
	b, _ := json.Marshal(s)
	return string(b)
}

// decodeSummary reads a summary column back.
func decodeSummary(col string) (domain.NotificationSummary, error) {
	var s domain.NotificationSummary
	if err := json.Unmarshal([]byte(col), &s); err != nil {
		return domain.NotificationSummary{}, err
	}
	return s, nil
}
