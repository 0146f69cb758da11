package main

import (
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
)

// stampCards gives every card its recorded version and hash, which the API,
// the Types page and drill receipts name.
func stampCards(cards domain.Cards, versions map[string]int) {
	for name, c := range cards {
		c.Version, c.SHA256 = versions[name], store.CardSHA256(c)
		cards[name] = c
	}
}
