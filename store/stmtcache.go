package store

import (
	"fmt"
	"reflect"
	"strconv"
	"sync"
)

// A flush renders the same few statement shapes over and over: a create
// with its attempt and two events, a settle's update with its attempt's,
// and so on. Rendering one — joining its column lists, numbering its
// placeholders — was a measurable part of a call's CPU in the group commit
// (docs/design/performance-log.md), for SQL text that only the shape decides. So a single statement's text is
// rendered once per shape and kept; what changes from one change to the
// next, its arguments, is collected by the renderer's own walk of the plan
// without writing its text (cachedSingle), so the order is the one it
// numbers them in. A multi-row statement (multirow.go) is kept the same
// way, by its tables' columns. Under test (verifyStatementCache) every cached text
// and its arguments are checked against a fresh rendering.

// maxShapes bounds the cache; past it a new shape is rendered each time.
const maxShapes = 1024

// statementCache maps a shape to its SQL text.
type statementCache struct {
	mu sync.RWMutex
	m  map[string]string
}

var singleSQL, multiSQL = statementCache{m: map[string]string{}}, statementCache{m: map[string]string{}}

// verifyStatementCache makes every cache hit render afresh and panic on
// any difference; the package's tests turn it on.
var verifyStatementCache = false

func (c *statementCache) get(key []byte) (string, bool) {
	c.mu.RLock()
	s, ok := c.m[string(key)]
	c.mu.RUnlock()
	return s, ok
}

func (c *statementCache) put(key []byte, sql string) {
	c.mu.Lock()
	if len(c.m) < maxShapes {
		c.m[string(key)] = sql
	}
	c.mu.Unlock()
}

// singleStatement renders the plan as one statement (renderSingle), its
// text from the cache when its shape was rendered before.
func singleStatement(p *writePlan) *stmt {
	var buf [512]byte
	key := singleShape(buf[:0], p)
	sql, ok := singleSQL.get(key)
	if !ok {
		s := renderSingle(p)
		singleSQL.put(key, s.sql.String())
		return s
	}
	s := cachedSingle(p, sql)
	if verifyStatementCache {
		verifyCached(key, s, renderSingle(p))
	}
	return s
}

// verifyCached panics unless the statement from the cache is the one
// rendered afresh, text and arguments.
func verifyCached(key []byte, cached, fresh *stmt) {
	if cached.text != fresh.sql.String() || !reflect.DeepEqual(cached.args, fresh.args) {
		panic(fmt.Sprintf("statement cache: shape %q\n cached %s %v\n render %s %v", key, cached.text, cached.args, fresh.sql.String(), fresh.args))
	}
}

// singleShape is what decides a single statement's text: the kind of
// write, its guard's parts, the columns written and the rows beside it.
func singleShape(b []byte, p *writePlan) []byte {
	b = append(b, flag(p.create), flag(p.noTwin), flag(p.guard.checkContent), flag(p.guard.liveLease), '|')
	b = appendShapeCols(b, p.cols)
	b = appendShapeChild(b, p.content)
	b = appendShapeChild(b, p.attempt)
	return strconv.AppendInt(append(b, 'e'), int64(len(p.events)), 10)
}

func flag(b bool) byte {
	if b {
		return '1'
	}
	return '0'
}

func appendShapeCols(b []byte, cols []col) []byte {
	for _, c := range cols {
		b = append(b, c.name...)
		b = append(b, ':')
		b = append(b, c.typ...)
		b = append(b, ',')
	}
	return append(b, '|')
}

func appendShapeChild(b []byte, cw *childWrite) []byte {
	switch {
	case cw == nil:
		return append(b, '-', '|')
	case cw.insert != nil:
		return appendShapeCols(append(b, 'i'), cw.insert)
	}
	return appendShapeCols(appendShapeCols(append(b, 'u'), cw.set), cw.key)
}
