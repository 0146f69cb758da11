package pages

import "net/url"

// ContentSearchURL is the Operations page's search for the text given: it
// searches every operation, by content too, where the queue searches only
// what waits on a person.
func ContentSearchURL(q string) string {
	if q == "" {
		return "/desk/operations"
	}
	return "/desk/operations?" + url.Values{"q": {q}}.Encode()
}
