package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
)

// DefaultBodyLimit bounds request bodies when Config.BodyLimit is 0. The
// 64 KiB content limit is the domain's (domain.MaxContentBytes).
const DefaultBodyLimit = 256 << 10

// readBody reads the whole body, refusing more than limit bytes.
func readBody(c *gin.Context, limit int64) ([]byte, error) {
	data, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, limit))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, domain.Errorf(domain.ETooLarge, "the body is larger than %d bytes", tooLarge.Limit)
	case err != nil:
		return nil, domain.Errorf(domain.EInvalidJSON, "the body could not be read")
	}
	return data, nil
}

// bind reads the body and parses it with parse, answering the problem
// itself when either fails; ok is false then and the handler returns.
func bind[T any](s *server, c *gin.Context, parse func([]byte) (T, error)) (v T, ok bool) {
	data, err := readBody(c, s.bodyLimit)
	if err == nil {
		v, err = parse(data)
	}
	if err != nil {
		s.fail(c, err)
		return v, false
	}
	return v, true
}

// unmarshalStrict decodes exactly one JSON object into dst: unknown fields,
// members named twice or in another case, trailing data and an empty body
// are refused, so a typo never silently drops a field.
func unmarshalStrict(data []byte, dst any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return domain.Errorf(domain.EInvalidJSON, "the body is empty; a JSON object is required")
	}
	if err := checkMembers(data, reflect.TypeOf(dst)); err != nil { // decode_members.go
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return decodeError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return domain.Errorf(domain.EInvalidJSON, "unexpected data after the JSON object")
	}
	return nil
}

// decodeError translates encoding/json's errors: syntax is invalid_json, a
// value of the wrong type or an unknown member is validation_failed on the
// field it concerns.
func decodeError(err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return domain.Errorf(domain.EInvalidJSON, "malformed JSON at byte %d: %s", syntax.Offset, syntax.Error())
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return domain.Errorf(domain.EInvalidJSON, "the JSON ends too early")
	case errors.As(err, &typ) && typ.Field == "":
		return domain.Errorf(domain.EInvalidJSON, "the body must be a JSON object, not %s", typ.Value)
	case errors.As(err, &typ):
		return domain.Invalid(domain.FieldError{Field: typ.Field, Message: "must be " + jsonKind(typ.Type.Kind().String())})
	}
	// encoding/json reports unknown members only as text.
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return domain.Invalid(domain.FieldError{Field: strings.Trim(name, `"`), Message: "is not a known field"})
	}
	return domain.Errorf(domain.EInvalidJSON, "the body is not valid JSON")
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice", "array":
		return "an array"
	case "struct", "map":
		return "an object"
	case "float32", "float64":
		return "a number"
	}
	return "an integer" // the integer kinds; out-of-range numbers land here too
}

// fieldErrs collects validation problems in field order.
type fieldErrs []domain.FieldError

func (f *fieldErrs) add(field, format string, args ...any) {
	*f = append(*f, domain.FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

// err is nil when nothing was collected, else validation_failed.
func (f fieldErrs) err() error {
	if len(f) == 0 {
		return nil
	}
	return domain.Invalid(f...)
}

// maxLen checks an optional free-text field's length in bytes.
func (f *fieldErrs) maxLen(field, v string, n int) {
	if len(v) > n {
		f.add(field, "must be at most %d bytes", n)
	}
}

// isNull reports whether a raw member was sent as JSON null.
func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// object returns raw unless it is absent or null.
func object(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || isNull(raw) {
		return nil
	}
	return raw
}
