// Package pages holds the desk's pages. Each page is a view model (plain
// strings, numbers and times the handler prepares), the page itself inside
// the layout, and the fragments htmx swaps in place; the handler renders a
// fragment alone when the request comes from htmx.
package pages
