package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
)

// route is one entry of THE route table: the router registers from it and
// the OpenAPI document is built from it, so the two cannot drift.
type route struct {
	Method  string
	Path    string // gin syntax: /v1/operations/:id
	ID      string // OpenAPI operationId
	Summary string
	Tag     string
	Public  bool // no bearer credential needed
	Body    any  // the request shape (a zero value); nil when there is none
	Query   []param
	Replies []reply
	Fails   []int // problem statuses beyond those every route of its kind shares
	Handle  func(*server, *gin.Context)
}

// reply is one success answer. Body is a zero value of the response shape,
// or nil for a non-JSON body of type Media.
type reply struct {
	Status  int
	Desc    string
	Body    any
	Media   string
	Headers []string
}

// param is a query parameter; Enum names an enumValues list.
type param struct {
	Name, Desc, Type, Enum string
	Repeat                 bool
}

// okReplies is a route's one reply, 200 with body and headers.
func okReplies(desc string, body any, headers ...string) []reply {
	return []reply{{Status: http.StatusOK, Desc: desc, Body: body, Headers: headers}}
}

const (
	tagOps     = "operations"
	tagWorker  = "worker protocol"
	tagHuman   = "human actions"
	tagEvents  = "events"
	tagTypes   = "operation types"
	tagService = "service"
	tagAudit   = "audit"
)

// Problem statuses shared by many routes.
var (
	onOperation = []int{http.StatusForbidden, http.StatusNotFound, http.StatusConflict}
	onLookup    = []int{http.StatusNotFound}
)

// routes is the API, in the order API.md describes it.
var routes = []route{
	{Method: "POST", Path: "/v1/operations", ID: "registerOperation", Tag: tagOps,
		Summary: "Register an operation under its key, optionally claiming it",
		Body:    registerRequest{},
		Replies: []reply{
			{Status: http.StatusCreated, Desc: "a new operation", Body: registerResponse{}, Headers: []string{"Location", "Retry-After"}},
			{Status: http.StatusOK, Desc: "the key exists with the same fingerprint: the current operation", Body: registerResponse{},
				Headers: []string{"Idempotent-Replayed", "Retry-After"}},
		},
		Fails:  []int{http.StatusForbidden, http.StatusNotFound, http.StatusConflict, http.StatusUnprocessableEntity},
		Handle: (*server).register},
	{Method: "GET", Path: "/v1/operations", ID: "listOperations", Tag: tagOps,
		Summary: "List and search operations, oldest first, with keyset pagination",
		Query:   listQueryParams, Replies: okReplies("one page of operations", operationList{}),
		Fails: []int{http.StatusBadRequest}, Handle: (*server).listOperations},
	{Method: "GET", Path: "/v1/operations/:id", ID: "getOperation", Tag: tagOps,
		Summary: "Get an operation with its content", Replies: okReplies("the operation", operationJSON{}),
		Fails: onLookup, Handle: (*server).getOperation},
	{Method: "POST", Path: "/v1/operations/:id/claim", ID: "claimOperation", Tag: tagWorker,
		Summary: "Claim the lease on one operation (with begin: true, begun in the same change)", Body: claimRequest{},
		Replies: okReplies("the claim", claimJSON{}), Fails: onOperation, Handle: (*server).claim},
	{Method: "POST", Path: "/v1/claims", ID: "claimNext", Tag: tagWorker,
		Summary: "Claim the next ready operations (pull mode)", Body: pullRequest{},
		Replies: okReplies("the claims, possibly none", claimList{}), Fails: []int{http.StatusForbidden}, Handle: (*server).claimNext},
	{Method: "POST", Path: "/v1/operations/:id/heartbeat", ID: "heartbeat", Tag: tagWorker,
		Summary: "Extend the lease", Body: heartbeatRequest{}, Replies: okReplies("the operation with the new expiry", operationJSON{}),
		Fails: onOperation, Handle: opAction(parseHeartbeat, workflow, (*domain.Workflow).Heartbeat)},
	{Method: "POST", Path: "/v1/operations/:id/begin", ID: "beginOperation", Tag: tagWorker,
		Summary: "Record that the provider is about to be called (write-ahead)", Body: beginRequest{},
		Replies: okReplies("the operation, action_pending", operationJSON{}), Fails: onOperation,
		Handle: opAction(parseBegin, workflow, (*domain.Workflow).Begin)},
	{Method: "POST", Path: "/v1/operations/:id/settle", ID: "settleOperation", Tag: tagWorker,
		Summary: "Settle the attempt; the server applies the type's card", Body: settleRequest{},
		Replies: okReplies("the operation as settled; when the same settle (lease token, outcome, error class and code, result) "+
			"committed before, the operation as it is now, with Idempotent-Replayed: true and nothing written",
			operationJSON{}, "Idempotent-Replayed"), Fails: onOperation,
		Handle: (*server).settle},
	{Method: "POST", Path: "/v1/execute/:type", ID: "executeOperation", Tag: tagOps, Public: true,
		Summary: "Register, make the card's provider call as Handoff's own worker, and answer the outcome",
		Body:    executeBody{},
		Replies: []reply{
			{Status: http.StatusOK, Desc: "completed: the operation; a replay of a completed key calls nothing", Body: operationJSON{},
				Headers: []string{"Idempotent-Replayed"}},
			{Status: http.StatusAccepted, Desc: "still running, or a retry is scheduled: the operation, at Location", Body: operationJSON{},
				Headers: []string{"Location", "Retry-After", "Preference-Applied"}},
		},
		Fails:  []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusConflict, http.StatusUnprocessableEntity, http.StatusServiceUnavailable},
		Handle: (*server).execute},
	{Method: "POST", Path: "/v1/operations/:id/reconcile", ID: "reconcileOperation", Tag: tagWorker,
		Summary: "Report a lookup at the provider for an unknown outcome", Body: reconcileRequest{},
		Replies: okReplies("the operation", operationJSON{}), Fails: onOperation,
		Handle: opAction(parseReconcile, workflow, (*domain.Workflow).Reconcile)},
	{Method: "POST", Path: "/v1/operations/:id/resolve", ID: "resolveOperation", Tag: tagHuman,
		Summary: "Resolve a desk item (operator)", Body: resolveRequest{}, Replies: okReplies("the operation", operationJSON{}),
		Fails: onOperation, Handle: opAction(parseResolve, desk, (*domain.Desk).Resolve)},
	{Method: "POST", Path: "/v1/operations/:id/assign", ID: "assignOperation", Tag: tagHuman,
		Summary: "Assign a desk item, or unassign it (operator)", Body: assignRequest{},
		Replies: okReplies("the operation", operationJSON{}), Fails: onOperation, Handle: opAction(parseAssign, desk, assignTo)},
	{Method: "POST", Path: "/v1/operations/:id/notes", ID: "addNote", Tag: tagHuman,
		Summary: "Add a note to the timeline (operator)", Body: noteRequest{}, Replies: okReplies("the operation", operationJSON{}),
		Fails: onOperation, Handle: opAction(parseNote, desk, (*domain.Desk).AddNote)},
	{Method: "POST", Path: "/v1/operations/:id/revisions", ID: "reviseContent", Tag: tagHuman,
		Summary: "Revise the content; the new version needs approval (operator)", Body: reviseRequest{},
		Replies: okReplies("the operation, awaiting_approval", operationJSON{}), Fails: onOperation,
		Handle: opAction(parseRevise, desk, (*domain.Desk).Revise)},
	{Method: "POST", Path: "/v1/operations/:id/approve", ID: "approveContent", Tag: tagHuman,
		Summary: "Approve a content version; never one's own revision (approver)", Body: decisionRequest{},
		Replies: okReplies("the operation", operationJSON{}), Fails: onOperation, Handle: opAction(parseApprove, desk, (*domain.Desk).Approve)},
	{Method: "POST", Path: "/v1/operations/:id/reject", ID: "rejectContent", Tag: tagHuman,
		Summary: "Reject a content version, cancelling the operation (approver)", Body: decisionRequest{},
		Replies: okReplies("the operation, cancelled", operationJSON{}), Fails: onOperation, Handle: opAction(parseReject, desk, (*domain.Desk).Reject)},
	{Method: "POST", Path: "/v1/batches", ID: "decideBatch", Tag: tagHuman,
		Summary: "Preview or apply one decision to up to 1,000 desk items, each with its own expected_version (operator)",
		Body:    batchRequest{}, Replies: okReplies("each item's result; the events written carry the batch_id", batchResponse{}),
		Fails: []int{http.StatusForbidden}, Handle: (*server).batch},
	{Method: "GET", Path: "/v1/incidents", ID: "listIncidents", Tag: tagHuman,
		Summary: "The incidents: desk items grouped by type and error, with their triage status, active ones first (a person with a role)",
		Replies: okReplies("the incidents", incidentList{}), Fails: []int{http.StatusForbidden}, Handle: (*server).listIncidents},
	{Method: "GET", Path: "/v1/operations/:id/attempts", ID: "listAttempts", Tag: tagOps,
		Summary: "Every attempt of an operation", Replies: okReplies("the attempts, first first", attemptList{}),
		Fails: onLookup, Handle: (*server).attempts},
	{Method: "GET", Path: "/v1/operations/:id/timeline", ID: "getTimeline", Tag: tagOps,
		Summary: "The operation's audit events in order", Replies: okReplies("the audit events", timeline{}),
		Fails: onLookup, Handle: (*server).timeline},
	{Method: "POST", Path: "/v1/events", ID: "registerEvent", Tag: tagEvents,
		Summary: "Register an event: one operation per action", Body: eventRequest{},
		Replies: []reply{
			{Status: http.StatusCreated, Desc: "a new event", Body: eventJSON{}},
			{Status: http.StatusOK, Desc: "a redelivery: the same operations", Body: eventJSON{}, Headers: []string{"Idempotent-Replayed"}},
		},
		Fails: []int{http.StatusForbidden, http.StatusNotFound, http.StatusConflict, http.StatusUnprocessableEntity}, Handle: (*server).registerEvent},
	{Method: "GET", Path: "/v1/events/:event_id", ID: "getEvent", Tag: tagEvents,
		Summary: "An event with each action's current operation", Replies: okReplies("the event", eventJSON{}),
		Fails: onLookup, Handle: (*server).getEvent},
	{Method: "GET", Path: "/v1/operation-types", ID: "listOperationTypes", Tag: tagTypes,
		Summary: "The operation types (retry safety cards)", Replies: okReplies("the cards, by name", cardList{}),
		Handle: (*server).listTypes},
	{Method: "GET", Path: "/v1/operation-types/:name", ID: "getOperationType", Tag: tagTypes,
		Summary: "One operation type", Replies: okReplies("the card", cardJSON{}), Fails: onLookup, Handle: (*server).getType},
	{Method: "POST", Path: "/v1/drill-receipts", ID: "recordDrillReceipt", Tag: tagTypes,
		Summary: "Record the receipt of a drill run against this Handoff (handoff drill --url): shown on its Types page, its hash in its audit trail (a workflow token or an admin)",
		Body:    drillReceiptRequest{}, Replies: []reply{{Status: http.StatusCreated, Desc: "the receipt is recorded", Body: drillReceiptJSON{}}},
		Fails:  []int{http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound, http.StatusConflict, http.StatusUnprocessableEntity},
		Handle: (*server).recordDrill},
	{Method: "GET", Path: "/v1/audit", ID: "listAudit", Tag: tagAudit,
		Summary: "The audit trail across operations, in write order; with a time range, in time order (a person with a role; a workflow token: its namespace's operations)",
		Query:   auditQueryParams, Replies: okReplies("one page of audit events", auditPage{}),
		Fails: []int{http.StatusBadRequest, http.StatusForbidden}, Handle: (*server).listAudit},
	{Method: "GET", Path: "/v1/audit/export", ID: "exportAudit", Tag: tagAudit,
		Summary: "Stream the audit trail with its chain fields as JSON Lines or CSV (auditor or admin); each export is audited",
		Query:   auditExportParams,
		Replies: []reply{{Status: http.StatusOK, Media: "application/x-ndjson",
			Desc: "one event per line, as hashed, with its hash; with format=csv, text/csv (RFC 4180, formula cells neutralised)"}},
		Fails: []int{http.StatusBadRequest, http.StatusForbidden}, Handle: (*server).exportAudit},
	{Method: "GET", Path: "/v1/whoami", ID: "whoami", Tag: tagService,
		Summary: "The caller as authenticated: a workflow token's name and namespace, or a person's identity and role",
		Replies: okReplies("the caller", whoamiJSON{}), Handle: (*server).whoami},
	{Method: "GET", Path: "/healthz", ID: "healthz", Tag: tagService, Public: true,
		Summary: "The process is up", Replies: okReplies("up", statusJSON{}), Handle: (*server).healthz},
	{Method: "GET", Path: "/readyz", ID: "readyz", Tag: tagService, Public: true,
		Summary: "The database is reachable and migrated", Replies: okReplies("ready", statusJSON{}),
		Fails: []int{http.StatusServiceUnavailable}, Handle: (*server).readyz},
	{Method: "GET", Path: "/metrics", ID: "metrics", Tag: tagService, Public: true,
		Summary: "Prometheus metrics", Replies: []reply{{Status: http.StatusOK, Desc: "the metrics", Media: "text/plain"}},
		Handle: (*server).metrics},
	{Method: "GET", Path: "/v1/openapi.json", ID: "openapi", Tag: tagService, Public: true,
		Summary: "This document", Replies: okReplies("the OpenAPI 3.1 document", openAPIObject{}), Handle: (*server).openapi},
}

var listQueryParams = []param{
	{Name: "key", Desc: "exact operation key"},
	{Name: "state", Desc: "repeatable", Enum: "states", Repeat: true},
	{Name: "type", Desc: "operation type"},
	{Name: "namespace", Desc: "people only; a workflow token sees its own"},
	{Name: "event_id"}, {Name: "correlation_id"},
	{Name: "provider", Desc: "the provider of the operation's type"},
	{Name: "assignee"},
	{Name: "q", Desc: "matches key, event, correlation, provider key, result reference and error text"},
	{Name: "older_than", Desc: "a duration such as 30m, 4h or 2d"},
	{Name: "limit", Desc: "1-200, default 50", Type: "integer"},
	{Name: "cursor", Desc: "next_cursor of the previous page"},
}
