package domain

import "net/url"

// The desk's URL scheme, relative to the public URL: the API's links, the
// desk's pages and the notifications all point at an operation this way.

// DeskOperations is the desk's list of every operation.
const DeskOperations = "/desk/operations"

// DeskPath is the desk page of an operation.
func DeskPath(id string) string { return DeskOperations + "/" + url.PathEscape(id) }

// DeskActionPath is where the desk page of an operation posts action
// (assign, notes, resolve, …) or serves a part of it.
func DeskActionPath(id, action string) string { return DeskPath(id) + "/" + action }
