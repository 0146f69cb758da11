package pages

import "github.com/opshandoff/handoff/views/layouts"

// TypesView lists the operation types' retry safety cards.
type TypesView struct {
	Frame layouts.Frame
	Cards []CardView
}

// CardView is one retry safety card explained in words.
type CardView struct {
	Name, Description, SideEffect, Provider, Owner string
	Fields                                         []CardField
	Unverified                                     []string
	Drill                                          DrillView
}

// CardField is one field of a card: its value and what it means.
type CardField struct {
	Name, Value, Meaning string
	Warn                 bool // a guarantee the desk cannot count on
}
