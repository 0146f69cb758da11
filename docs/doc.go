// Package docs holds the project's own documents: the user's documentation
// by purpose (getting started, concepts, guides, reference), the API
// contract and the screenshots. It has no code: its tests keep the
// documents true — every route the contract names is served and every
// served route is named, no link in the repository's Markdown leaves the
// repository, and every relative link and #anchor in the README and under
// docs/ resolves. The documents' commands are run by e2e/docs_test.go.
package docs
