// Package docs holds the project's own documents (the API contract, the
// screenshots). It has no code: its tests keep the documents true — every
// route the contract names is served and every served route is named,
// execute.md's cards load and its curl request runs against a Handoff, and
// no link in the repository's Markdown leaves the repository.
package docs
