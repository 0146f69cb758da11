package main

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// The request bodies, byte for byte what json.Marshal wrote for the maps
// the driver used to send (TestBodies_sameAsMaps): members sorted by name,
// strings HTML-escaped. Each body is its own slice: the transport may
// still read a request's body after the answer has come.

// registerBody is POST /v1/operations: the key with its content and an
// inline claim, which begins at once unless the lifecycle sends begin.
// qkey and qtyp are quoted (quote).
func registerBody(qkey, qtyp []byte, begin bool) []byte {
	b := append(make([]byte, 0, 256), `{"claim":{"begin":`...)
	b = strconv.AppendBool(b, begin)
	b = append(b, `,"lease_seconds":30,"worker":"handoff-load"},"content":{"owner":"u_9","ref":`...)
	b = append(b, qkey...)
	b = append(b, `,"title":"Follow up"},"key":`...)
	b = append(b, qkey...)
	b = append(b, `,"type":`...)
	b = append(b, qtyp...)
	return append(b, '}')
}

// beginBody is POST /v1/operations/{id}/begin.
func beginBody(token int64) []byte {
	b := append(make([]byte, 0, 40), `{"lease_token":`...)
	b = strconv.AppendInt(b, token, 10)
	return append(b, '}')
}

// settleBody is POST /v1/operations/{id}/settle, completed with the ref
// crm_<key>.
func settleBody(token int64, key string) []byte {
	b := append(make([]byte, 0, 160), `{"lease_token":`...)
	b = strconv.AppendInt(b, token, 10)
	b = append(b, `,"outcome":"completed","result":{"ref":`...)
	b = quote(b, "crm_"+key)
	return append(b, "}}"...)
}

// quote appends s as json.Marshal writes a string.
func quote(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
