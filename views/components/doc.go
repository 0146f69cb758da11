// Package components holds the small pieces the desk's pages share: times
// the browser localises, state badges, notices, content diffs, pagers.
package components
