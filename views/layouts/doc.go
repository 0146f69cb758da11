// Package layouts holds the desk's page frame: head, navigation, the
// development sign-in banner.
package layouts
