package api

import "github.com/opshandoff/handoff/domain"

// lookupAdapterJSON is a card's lookup_adapter as the API shows it: the
// request and the reading rules; the secret only by the name of the
// variable that holds it.
type lookupAdapterJSON struct {
	Method         string   `json:"method"`
	URL            string   `json:"url" doc:"a template: {provider_key}, {key}, {event_id} and {content.field}, each escaped where it stands"`
	AuthEnv        *string  `json:"auth_env" doc:"the environment variable holding the secret; the secret is never shown"`
	FoundStatus    []int    `json:"found_status"`
	Ref            string   `json:"ref" doc:"RFC 6901 JSON pointer to the provider's reference"`
	Key            *string  `json:"key" doc:"RFC 6901 JSON pointer to where the record holds the provider key, which binds it to the operation; null when compare rules bind it"`
	WhenNonempty   *string  `json:"when_nonempty"`
	State          *string  `json:"state"`
	DoneStates     []string `json:"done_states"`
	Compare        []string `json:"compare" doc:"answer pointer = content pointer, per compared field"`
	NotFoundStatus []int    `json:"not_found_status"`
	Window         string   `json:"window" doc:"how long Handoff keeps looking before it concludes"`
}

func toLookupAdapter(a *domain.LookupAdapter) *lookupAdapterJSON {
	if a == nil {
		return nil
	}
	out := &lookupAdapterJSON{Method: a.Method, URL: a.URL, AuthEnv: nullIfEmpty(a.AuthEnv), FoundStatus: append([]int{}, a.Found.Status...),
		Ref: a.Found.Ref, Key: nullIfEmpty(a.Found.Key), WhenNonempty: nullIfEmpty(a.Found.WhenNonempty), State: nullIfEmpty(a.Found.State), DoneStates: append([]string{}, a.Found.DoneStates...),
		Compare: []string{}, NotFoundStatus: append([]int{}, a.NotFoundStatus...), Window: duration(a.Window)}
	for _, c := range a.Found.Compare {
		out.Compare = append(out.Compare, c.Answer+" = "+c.Content)
	}
	return out
}
