// Package api serves Handoff's JSON API under /v1 with gin: the route table
// (from which both the router and the OpenAPI document are built), request
// and response shapes with their converters, strict decoding, problem+json
// errors, authentication, request IDs and metrics.
//
// Handlers parse, call one use case of the ledger (domain.Workflow for the
// worker protocol, domain.Desk and its neighbours for people) and render;
// every decision
// is the domain's. problem.go is the only place that turns a domain.Code
// into an HTTP status.
package api
