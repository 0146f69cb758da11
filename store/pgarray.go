package store

import (
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// A multi-row statement's columns (multirow.go) go to PostgreSQL as
// arrays of their own types — text[], bigint[], integer[], boolean[],
// timestamptz[] — in pgx's binary form. pgx encodes a []*string or a
// []*time.Time by reflection, boxing every element; a pgArray hands it
// each element's address, a pgtype value it encodes directly. Before,
// every column went as text[] and PostgreSQL parsed each element back
// into its type.

// pgArray is one array parameter: each element a pgtype value whose
// Valid false is NULL.
type pgArray[T any] []T

func (a pgArray[T]) Dimensions() []pgtype.ArrayDimension {
	if a == nil {
		return nil
	}
	return []pgtype.ArrayDimension{{Length: int32(len(a)), LowerBound: 1}}
}

func (a pgArray[T]) Index(i int) any { return &a[i] }

func (a pgArray[T]) IndexType() any { return new(T) }

// multiCol is one column's values, in the array its type is sent as.
type multiCol struct {
	typ   string
	n     int
	text  pgArray[pgtype.Text]
	ints  pgArray[pgtype.Int8]
	bools pgArray[pgtype.Bool]
	times pgArray[pgtype.Timestamptz]
}

// init sets the column's type and makes room for rows values.
func (c *multiCol) init(typ string, rows int) {
	c.typ = typ
	switch typ {
	case "text":
		c.text = make(pgArray[pgtype.Text], 0, rows)
	case "bigint", "integer":
		c.ints = make(pgArray[pgtype.Int8], 0, rows)
	case "boolean":
		c.bools = make(pgArray[pgtype.Bool], 0, rows)
	case "timestamptz":
		c.times = make(pgArray[pgtype.Timestamptz], 0, rows)
	}
}

func (c *multiCol) add(v any) {
	c.n++
	switch c.typ {
	case "text":
		s, ok := textOf(v)
		c.text = append(c.text, pgtype.Text{String: s, Valid: ok})
	case "bigint", "integer":
		n, ok := intOf(v)
		c.ints = append(c.ints, pgtype.Int8{Int64: n, Valid: ok})
	case "boolean":
		b, ok := v.(bool)
		if !ok && v != nil {
			panic("multirow: a boolean column's value is not a bool")
		}
		c.bools = append(c.bools, pgtype.Bool{Bool: b, Valid: ok})
	case "timestamptz":
		t, ok := timeOf(v)
		c.times = append(c.times, pgtype.Timestamptz{Time: t, Valid: ok})
	default:
		panic("multirow: no array for column type " + c.typ) // a column type added without its case here
	}
}

// array is the column's parameter.
func (c *multiCol) array() any {
	switch c.typ {
	case "text":
		return c.text
	case "bigint", "integer":
		return c.ints
	case "boolean":
		return c.bools
	}
	return c.times
}

// textOf is v in PostgreSQL's text input form; false for NULL.
func textOf(v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "", false
	case string:
		return x, true
	case *string:
		if x == nil {
			return "", false
		}
		return *x, true
	case int:
		return strconv.Itoa(x), true
	case *int:
		if x == nil {
			return "", false
		}
		return strconv.Itoa(*x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case bool:
		return strconv.FormatBool(x), true
	case time.Time:
		return pgTime(x), true
	case *time.Time:
		if x == nil {
			return "", false
		}
		return pgTime(*x), true
	}
	panic("multirow: no text form for a column value") // a column type added without its case here
}

// pgTime is t as pgx's binary encoding stores it: cut (not rounded) to
// the microsecond, so both paths write the same instant.
func pgTime(t time.Time) string { return t.UTC().Truncate(time.Microsecond).Format(time.RFC3339Nano) }

// intOf is an integer column's value; false for NULL.
func intOf(v any) (int64, bool) {
	switch x := v.(type) {
	case nil:
		return 0, false
	case int:
		return int64(x), true
	case *int:
		if x == nil {
			return 0, false
		}
		return int64(*x), true
	case int64:
		return x, true
	case *int64:
		if x == nil {
			return 0, false
		}
		return *x, true
	}
	panic("multirow: an integer column's value is not an integer")
}

// timeOf is a timestamptz column's value; false for NULL. pgx's binary
// form cuts it to the microsecond, as pgTime does.
func timeOf(v any) (time.Time, bool) {
	switch x := v.(type) {
	case nil:
		return time.Time{}, false
	case time.Time:
		return x, true
	case *time.Time:
		if x == nil {
			return time.Time{}, false
		}
		return *x, true
	}
	panic("multirow: a timestamptz column's value is not a time")
}
