package api

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strconv"
	"strings"
)

// openAPIJSON renders the OpenAPI 3.1 document of the route table.
func openAPIJSON(rs []route) ([]byte, error) {
	return json.Marshal(openAPIDocument(rs))
}

func openAPIDocument(rs []route) map[string]any {
	set := schemaSet{}
	set.schemaOf(reflect.TypeFor[problem](), false)
	paths := map[string]map[string]any{}
	for _, r := range rs {
		p := openAPIPath(r.Path)
		if paths[p] == nil {
			paths[p] = map[string]any{}
		}
		paths[p][strings.ToLower(r.Method)] = set.operation(r)
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{"title": "Handoff API", "version": "1",
			"description": "An operation ledger with a human reconciliation desk. Errors are RFC 9457 problem details."},
		"servers":  []any{map[string]any{"url": "/", "description": "the server this document was read from"}},
		"tags":     tagList(rs),
		"paths":    paths,
		"security": []any{map[string]any{"bearer": []string{}}},
		"components": map[string]any{
			"schemas": map[string]any(set),
			"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer",
				"description": "a workflow's API token (hnd_…) or a person's OIDC JWT"}},
		},
	}
}

func tagList(rs []route) []any {
	var out []any
	seen := map[string]bool{}
	for _, r := range rs {
		if !seen[r.Tag] {
			seen[r.Tag] = true
			out = append(out, map[string]any{"name": r.Tag, "description": tagDescriptions[r.Tag]})
		}
	}
	return out
}

// operation is one route's OpenAPI operation object.
func (set schemaSet) operation(r route) map[string]any {
	op := map[string]any{"operationId": r.ID, "summary": r.Summary, "description": routeDescriptions[r.ID], "tags": []string{r.Tag}}
	var params []any
	for _, seg := range strings.Split(r.Path, "/") {
		if name, ok := strings.CutPrefix(seg, ":"); ok {
			params = append(params, map[string]any{"name": name, "in": "path", "required": true,
				"schema": map[string]any{"type": "string"}})
		}
	}
	for _, q := range r.Query {
		params = append(params, queryParam(q))
	}
	if len(params) > 0 {
		op["parameters"] = params
	}
	if r.Body != nil {
		op["requestBody"] = map[string]any{"required": true, "content": map[string]any{
			"application/json": map[string]any{"schema": set.schemaOf(reflect.TypeOf(r.Body), true)}}}
	}
	responses := map[string]any{}
	for _, rep := range r.Replies {
		responses[strconv.Itoa(rep.Status)] = set.reply(rep)
	}
	for _, status := range problemStatuses(r) {
		responses[strconv.Itoa(status)] = problemResponse(status)
	}
	op["responses"] = responses
	if r.Public {
		op["security"] = []any{}
	}
	return op
}

func queryParam(q param) map[string]any {
	s := map[string]any{"type": "string"}
	if q.Type != "" {
		s["type"] = q.Type
	}
	if q.Enum != "" {
		s["enum"] = enumValues[q.Enum]
	}
	if q.Repeat {
		s = map[string]any{"type": "array", "items": s}
	}
	p := map[string]any{"name": q.Name, "in": "query", "schema": s}
	if q.Desc != "" {
		p["description"] = q.Desc
	}
	return p
}

func (set schemaSet) reply(rep reply) map[string]any {
	out := map[string]any{"description": rep.Desc}
	if rep.Body != nil {
		out["content"] = map[string]any{"application/json": map[string]any{"schema": set.schemaOf(reflect.TypeOf(rep.Body), false)}}
	} else if rep.Media != "" {
		out["content"] = map[string]any{rep.Media: map[string]any{"schema": map[string]any{"type": "string"}}}
	}
	h := headers(append([]string{"X-Request-ID"}, rep.Headers...))
	out["headers"] = h
	return out
}

// headerDocs describes the response headers the API sets.
var headerDocs = map[string]string{
	"X-Request-ID":        "the request's ID, the caller's when it sent a plain one",
	"Location":            "the new operation",
	"Idempotent-Replayed": "true when the answer replays an earlier registration or settle",
	"Retry-After":         "seconds to wait before trying again",
	"WWW-Authenticate":    "the scheme to authenticate with: Bearer",
	"Preference-Applied":  "respond-async when the request asked for it",
}

func headers(names []string) map[string]any {
	out := map[string]any{}
	for _, n := range names {
		out[n] = map[string]any{"description": headerDocs[n], "schema": map[string]any{"type": "string"}}
	}
	return out
}

// problemStatuses are the problems a route can answer: its own plus those
// every route of its kind shares.
func problemStatuses(r route) []int {
	statuses := append([]int{}, r.Fails...)
	if r.Body != nil {
		statuses = append(statuses, http.StatusBadRequest, http.StatusRequestEntityTooLarge)
	}
	if !r.Public {
		statuses = append(statuses, http.StatusUnauthorized, http.StatusServiceUnavailable)
	}
	return append(statuses, http.StatusInternalServerError)
}

func problemResponse(status int) map[string]any {
	out := map[string]any{"description": http.StatusText(status) + " (problem details)",
		"content": map[string]any{"application/problem+json": map[string]any{
			"schema": map[string]any{"$ref": "#/components/schemas/Problem"}}}}
	h := []string{"X-Request-ID"}
	switch status {
	case http.StatusUnauthorized:
		h = append(h, "WWW-Authenticate")
	case http.StatusConflict, http.StatusServiceUnavailable:
		h = append(h, "Retry-After")
	}
	out["headers"] = headers(h)
	return out
}
