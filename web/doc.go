// Package web serves the desk: server-rendered HTML with gin and templ for
// the people who resolve what no machine could decide. Sign-in, sessions and
// CSRF protection live here; every decision is a call of one of the
// ledger's use cases (domain.Desk, Incidents, Bulk, Views, Outbox), and
// every page is a layout, the fragments htmx swaps, and one view model.
package web
