package api

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// The OpenAPI schemas are derived from the request and response shapes by
// reflection, so a field added to a shape appears in the document. Struct
// tags add what Go types cannot say:
//
//	schema:"required,nullable,object,string,enum=states,items=classes,pattern=key,
//	        min=1,max=3600,minlen=1,maxlen=255,minitems=1,maxitems=50,ref=Claim"
//	doc:"a description"
//
// In responses every member without omitempty is always present, so it is
// required (possibly null); in requests only those tagged required are, and
// unknown members are refused (additionalProperties: false).

// component names the shapes that appear under components/schemas.
type component struct {
	name    string
	request bool
}

var components = map[reflect.Type]component{
	reflect.TypeFor[operationJSON]():    {"Operation", false},
	reflect.TypeFor[operationList]():    {"OperationList", false},
	reflect.TypeFor[registerResponse](): {"RegisterResponse", false},
	reflect.TypeFor[claimRefusedJSON](): {"ClaimRefused", false},
	reflect.TypeFor[claimJSON]():        {"ClaimResponse", false},
	reflect.TypeFor[claimList]():        {"ClaimList", false},
	reflect.TypeFor[problem]():          {"Problem", false},
	reflect.TypeFor[eventJSON]():        {"Event", false},
	reflect.TypeFor[cardJSON]():         {"OperationType", false},
	reflect.TypeFor[cardList]():         {"OperationTypeList", false},
	reflect.TypeFor[attemptJSON]():      {"Attempt", false},
	reflect.TypeFor[attemptList]():      {"AttemptList", false},
	reflect.TypeFor[auditEventJSON]():   {"AuditEvent", false},
	reflect.TypeFor[timeline]():         {"Timeline", false},
	reflect.TypeFor[statusJSON]():       {"Status", false},
	reflect.TypeFor[registerRequest]():  {"RegisterRequest", true},
	reflect.TypeFor[claimRequest]():     {"ClaimRequest", true},
	reflect.TypeFor[pullRequest]():      {"PullRequest", true},
	reflect.TypeFor[heartbeatRequest](): {"HeartbeatRequest", true},
	reflect.TypeFor[beginRequest]():     {"BeginRequest", true},
	reflect.TypeFor[settleRequest]():    {"SettleRequest", true},
	reflect.TypeFor[reconcileRequest](): {"ReconcileRequest", true},
	reflect.TypeFor[resolveRequest]():   {"ResolveRequest", true},
	reflect.TypeFor[assignRequest]():    {"AssignRequest", true},
	reflect.TypeFor[noteRequest]():      {"NoteRequest", true},
	reflect.TypeFor[reviseRequest]():    {"ReviseRequest", true},
	reflect.TypeFor[decisionRequest]():  {"DecisionRequest", true},
	reflect.TypeFor[eventRequest]():     {"EventRequest", true},
	reflect.TypeFor[batchRequest]():     {"BatchRequest", true},
	reflect.TypeFor[batchResponse]():    {"BatchResponse", false},
}

func names[T interface{ String() string }](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = x.String()
	}
	return out
}

// enumValues are the closed sets the document lists, taken from the domain.
var enumValues = map[string][]string{
	"states":          names(domain.States),
	"outcomes":        names(domain.Outcomes),
	"classes":         names(domain.ErrorClasses),
	"resolve_actions": names(domain.ResolveActions),
	"then_actions":    {domain.ResolveRetry.String(), domain.ResolveCancel.String()},
	"batch_types":     {string(domain.BatchResolve), string(domain.BatchAssign), string(domain.BatchNote)},
	"batch_actions": {domain.ResolveRetry.String(), domain.ResolveCancel.String(), domain.ResolveConfirmNotExecuted.String(),
		domain.ResolveResendSameKey.String()},
	"batch_outcomes": {domain.BatchWouldApply, domain.BatchApplied, domain.BatchSkipped},
	"actor_kinds":    names(domain.ActorKinds),
	"incident_statuses": {string(domain.IncidentOpen), string(domain.IncidentAcknowledged), string(domain.IncidentResolved),
		string(domain.IncidentIgnored)},
	"roles":       names(domain.Roles),
	"idempotency": names([]domain.ProviderIdempotency{domain.IdempotencyNone, domain.IdempotencyKey, domain.IdempotencyKeyAndParams, domain.IdempotencyUnknown}),
	"lookups":     names([]domain.LookupMethod{domain.LookupNone, domain.LookupAPI, domain.LookupManual}),
	"refusals": names([]domain.ClaimRefusal{domain.RefusedCompleted, domain.RefusedInProgress, domain.RefusedRetryLater,
		domain.RefusedAwaitingApproval, domain.RefusedHandedOff, domain.RefusedCancelled}),
	"codes": codeNames(),
}

func codeNames() []string {
	var out []string
	for _, c := range domain.Codes() {
		out = append(out, string(c))
	}
	slices.Sort(out)
	return out
}

// patterns are the named regular expressions of the schema tag.
var patterns = map[string]string{"key": `^[A-Za-z0-9._:/@+=-]{1,255}$`}

// schemaSet accumulates components/schemas while schemas are derived.
type schemaSet map[string]any

// schemaOf returns the schema of t; request selects the request rules.
func (set schemaSet) schemaOf(t reflect.Type, request bool) map[string]any {
	if c, ok := components[t]; ok {
		if _, done := set[c.name]; !done {
			set[c.name] = map[string]any{} // placeholder: breaks cycles
			set[c.name] = set.object(t, c.request)
		}
		return map[string]any{"$ref": "#/components/schemas/" + c.name}
	}
	switch {
	case t == reflect.TypeFor[time.Time]():
		return map[string]any{"type": "string", "format": "date-time"}
	case t == reflect.TypeFor[json.RawMessage]():
		return map[string]any{} // any JSON value
	}
	switch t.Kind() {
	case reflect.Pointer:
		return nullable(set.schemaOf(t.Elem(), request))
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int64, reflect.Int32:
		return map[string]any{"type": "integer"}
	case reflect.Slice:
		return map[string]any{"type": "array", "items": set.schemaOf(t.Elem(), request)}
	case reflect.Map:
		return freeForm()
	case reflect.Struct:
		return set.object(t, request)
	}
	return map[string]any{}
}

// object derives a struct's schema; embedded structs lend their members.
func (set schemaSet) object(t reflect.Type, request bool) map[string]any {
	props := map[string]any{}
	var required []string
	set.members(t, request, props, &required)
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	if request {
		s["additionalProperties"] = false
	}
	return s
}

func (set schemaSet) members(t reflect.Type, request bool, props map[string]any, required *[]string) {
	for f := range t.Fields() {
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous {
			set.members(derefType(f.Type), request, props, required)
			continue
		}
		if name == "-" || !f.IsExported() {
			continue
		}
		tag := parseSchemaTag(f.Tag.Get("schema"))
		ft := f.Type
		// null is refused for required request members and never sent for
		// omitempty response members, so their pointers are not nullable.
		if (request && tag["required"] != "") || (!request && strings.Contains(opts, "omitempty")) {
			ft = derefType(ft)
		}
		s := set.field(ft, tag, request)
		if request && tag["required"] == "" {
			s = nullable(s) // encoding/json reads null as "not sent"
		}
		if d := f.Tag.Get("doc"); d != "" {
			s["description"] = d
		}
		props[name] = s
		if tag["required"] != "" || (!request && !strings.Contains(opts, "omitempty")) {
			*required = append(*required, name)
		}
	}
}

// field derives one member's schema and applies its tag.
func (set schemaSet) field(t reflect.Type, tag map[string]string, request bool) map[string]any {
	var s map[string]any
	switch {
	case tag["ref"] != "":
		s = map[string]any{"$ref": "#/components/schemas/" + tag["ref"]}
	case tag["object"] != "":
		s = freeForm()
	case tag["string"] != "":
		s = map[string]any{"type": "string"}
	default:
		s = set.schemaOf(t, request)
	}
	if tag["nullable"] != "" {
		s = nullable(s)
	}
	if tag["enum"] != "" {
		s = withEnum(s, enumValues[tag["enum"]])
	}
	if tag["items"] != "" {
		s["items"] = map[string]any{"type": "string", "enum": enumValues[tag["items"]]}
	}
	if tag["pattern"] != "" {
		s["pattern"] = patterns[tag["pattern"]]
	}
	for opt, kw := range map[string]string{"min": "minimum", "max": "maximum", "minlen": "minLength",
		"maxlen": "maxLength", "minitems": "minItems", "maxitems": "maxItems"} {
		if v, err := strconv.Atoi(tag[opt]); err == nil {
			s[kw] = v
		}
	}
	return s
}

// freeForm is a JSON object of any members (content, result data): said
// explicitly, since generators read a bare "type: object" as "no members".
func freeForm() map[string]any {
	return map[string]any{"type": "object", "additionalProperties": true}
}

// nullable admits null besides s, the OpenAPI 3.1 (JSON Schema) way.
func nullable(s map[string]any) map[string]any {
	if alts, ok := s["anyOf"].([]any); ok && len(alts) == 2 && reflect.DeepEqual(alts[1], map[string]any{"type": "null"}) {
		return s // already nullable
	}
	switch typ := s["type"].(type) {
	case string:
		out := maps.Clone(s)
		out["type"] = []string{typ, "null"}
		return out
	case []string:
		return s
	case nil:
		if len(s) == 0 {
			return s // any value, null included
		}
	}
	return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
}

// withEnum lists the allowed values, adding null when s admits it.
func withEnum(s map[string]any, values []string) map[string]any {
	out := maps.Clone(s)
	enum := make([]any, 0, len(values)+1)
	for _, v := range values {
		enum = append(enum, v)
	}
	if typ, ok := s["type"].([]string); ok && slices.Contains(typ, "null") {
		enum = append(enum, nil)
	}
	out["enum"] = enum
	return out
}

func derefType(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer {
		return t.Elem()
	}
	return t
}

// parseSchemaTag reads "required,enum=states,max=10" into a map; flags map
// to "true".
func parseSchemaTag(tag string) map[string]string {
	out := map[string]string{}
	for part := range strings.SplitSeq(tag, ",") {
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			v = "true"
		}
		out[k] = v
	}
	return out
}
