// Package docs holds the project's own documents: the user's documentation
// by purpose (getting started, concepts, guides, reference), the API
// contract and the screenshots. It has no code: its tests keep the
// documents true — every route the contract names is served and every
// served route is named, no link in the repository's Markdown leaves the
// repository, every relative link and #anchor in the README and under
// docs/ resolves, and execute.md's cards load and its curl request runs
// against a Handoff. The documents' commands are run by e2e/docs_test.go.
package docs
