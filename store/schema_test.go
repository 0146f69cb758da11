package store

import (
	"reflect"
	"sync"
	"testing"

	"gorm.io/gorm/schema"
)

// TestSchema_rowsMatchTables: every column of a hot table's GORM row
// struct is in schema.go's table, and each table column's field is that
// struct field — so a column added to one and not the other, or mapped to
// the wrong field, fails here rather than in a write that drops it.
func TestSchema_rowsMatchTables(t *testing.T) {
	check(t, &operationRow{}, opTable)
	check(t, &auditRow{}, auditTable)
	check(t, &attemptRow{}, attemptTable)
	check(t, &contentRow{}, contentTable)
	check(t, &notificationRow{}, outboxTable)
}

func check[R any](t *testing.T, row *R, table []column[R]) {
	t.Helper()
	sch, err := schema.Parse(row, &sync.Map{}, schema.NamingStrategy{})
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]*schema.Field{}
	for _, f := range sch.Fields {
		if f.DBName != "" {
			fields[f.DBName] = f
		}
	}
	v := reflect.ValueOf(row).Elem()
	seen := map[string]bool{}
	for _, c := range table {
		if seen[c.name] {
			t.Errorf("%s: column %s is listed twice", sch.Table, c.name)
		}
		seen[c.name] = true
		f, ok := fields[c.name]
		if !ok {
			t.Errorf("%s: column %s has no field in %T", sch.Table, c.name, *row)
			continue
		}
		want := v.FieldByIndex(f.StructField.Index).Addr().Pointer()
		if got := reflect.ValueOf(c.field(row)).Pointer(); got != want {
			t.Errorf("%s: column %s reads another field than %s", sch.Table, c.name, f.Name)
		}
		valueOf(c.field(row)) // every field has a value form
	}
	for name := range fields {
		if !seen[name] {
			t.Errorf("%s: %T's column %s is missing from schema.go", sch.Table, *row, name)
		}
	}
}
