package domain

import (
	"regexp"
	"sync"
)

// The card's rules about keys and about the provider's handling of one
// key: the pattern keys must match, and what concurrent requests under one
// provider key do at the provider (seed 003's template).

// The provider_concurrency values.
const (
	ConcurrencySerialises = "serialises" // the second same-key request waits for the first and gets its answer
	ConcurrencyRejects    = "rejects"    // the second same-key request is refused while the first runs
	ConcurrencyUnknown    = "unknown"
)

func validateKeyRules(c Card) []FieldError {
	var errs []FieldError
	if c.KeyPattern != "" {
		if _, err := regexp.Compile(c.KeyPattern); err != nil {
			errs = append(errs, FieldError{"key_pattern", "must be a regular expression: " + err.Error()})
		}
	}
	switch c.ProviderConcurrency {
	case "", ConcurrencySerialises, ConcurrencyRejects, ConcurrencyUnknown:
	default:
		errs = append(errs, FieldError{"provider_concurrency", "must be serialises, rejects or unknown"})
	}
	return errs
}

// Concurrency is the card's provider_concurrency, unknown when not said.
func (c Card) Concurrency() string {
	if c.ProviderConcurrency == "" {
		return ConcurrencyUnknown
	}
	return c.ProviderConcurrency
}

var keyPatterns sync.Map // pattern → *regexp.Regexp

// KeyMatches reports whether key matches the card's key_pattern (true
// without one). A pattern that does not compile matches nothing; cards
// check refuses it before it is loaded.
func (c Card) KeyMatches(key string) bool {
	if c.KeyPattern == "" {
		return true
	}
	re, ok := keyPatterns.Load(c.KeyPattern)
	if !ok {
		compiled, err := regexp.Compile(c.KeyPattern)
		if err != nil {
			return false
		}
		re, _ = keyPatterns.LoadOrStore(c.KeyPattern, compiled)
	}
	return re.(*regexp.Regexp).MatchString(key)
}
