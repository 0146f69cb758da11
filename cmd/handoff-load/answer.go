package main

import (
	"encoding/json"
	"strconv"
	"strings"
)

// The answers are read for what the driver checks: a registration's id
// and its claim's lease token, a settle's state. encoding/json decoded
// the whole operation into a struct by reflection, a tenth of the
// driver's CPU; here json.Valid checks the body as Unmarshal did, then a
// scanner reads the members wanted and steps over the rest. Whatever it
// does not read plainly — an escaped string, a member name that matches
// a wanted one only without regard to case, as encoding/json's matching
// does — goes to json.Unmarshal as before (TestAnswers_sameAsUnmarshal).

type registered struct {
	id      string
	claimed bool // a claim object in the answer (not absent, not null)
	token   int64
}

// registeredJSON is the answer as encoding/json decoded it.
type registeredJSON struct {
	ID    string `json:"id"`
	Claim *struct {
		Lease struct {
			Token int64 `json:"token"`
		} `json:"lease"`
	} `json:"claim"`
}

func readRegistered(data []byte) (registered, error) {
	if json.Valid(data) {
		if r, ok := scanRegistered(data); ok {
			return r, nil
		}
	}
	var v registeredJSON
	if err := json.Unmarshal(data, &v); err != nil {
		return registered{}, err
	}
	r := registered{id: v.ID, claimed: v.Claim != nil}
	if v.Claim != nil {
		r.token = v.Claim.Lease.Token
	}
	return r, nil
}

func readState(data []byte) (string, error) {
	if json.Valid(data) {
		if st, ok := scanState(data); ok {
			return st, nil
		}
	}
	var v struct {
		State string `json:"state"`
	}
	err := json.Unmarshal(data, &v)
	return v.State, err
}

func scanRegistered(data []byte) (r registered, ok bool) {
	s := scanner{d: data}
	ok = s.object(func(name string) bool {
		switch s.member(name, "id", "claim") {
		case "id":
			var str bool
			r.id, str = s.str()
			return str
		case "claim":
			if s.null() {
				r.claimed, r.token = false, 0
				return true
			}
			r.claimed, r.token = true, 0
			return s.object(func(name string) bool {
				if s.member(name, "lease") == "" {
					return s.skip()
				}
				return s.object(func(name string) bool {
					if s.member(name, "token") == "" {
						return s.skip()
					}
					var num bool
					r.token, num = s.int()
					return num
				})
			})
		case "?":
			return false
		}
		return s.skip()
	})
	return r, ok && s.end()
}

func scanState(data []byte) (state string, ok bool) {
	s := scanner{d: data}
	ok = s.object(func(name string) bool {
		switch s.member(name, "state") {
		case "state":
			var str bool
			state, str = s.str()
			return str
		case "?":
			return false
		}
		return s.skip()
	})
	return state, ok && s.end()
}

// scanner reads valid JSON (json.Valid said so); false from any of its
// methods is "not plainly", for encoding/json to decide.
type scanner struct {
	d []byte
	i int
}

func (s *scanner) skipSpace() {
	for s.i < len(s.d) && (s.d[s.i] == ' ' || s.d[s.i] == '\t' || s.d[s.i] == '\n' || s.d[s.i] == '\r') {
		s.i++
	}
}

func (s *scanner) end() bool { s.skipSpace(); return s.i == len(s.d) }

// member is which of the wanted names name is: "" for none, "?" for one
// that matches only as encoding/json matches, without regard to case.
func (s *scanner) member(name string, wanted ...string) string {
	for _, w := range wanted {
		if name == w {
			return w
		}
		if strings.EqualFold(name, w) {
			return "?"
		}
	}
	return ""
}

// object reads an object, calling member for each member with the scanner
// at its value.
func (s *scanner) object(member func(name string) bool) bool {
	s.skipSpace()
	if s.i >= len(s.d) || s.d[s.i] != '{' {
		return false
	}
	s.i++
	s.skipSpace()
	if s.i < len(s.d) && s.d[s.i] == '}' {
		s.i++
		return true
	}
	for {
		s.skipSpace()
		name, ok := s.str()
		if !ok {
			return false
		}
		s.skipSpace()
		if s.i >= len(s.d) || s.d[s.i] != ':' {
			return false
		}
		s.i++
		s.skipSpace()
		if !member(name) {
			return false
		}
		s.skipSpace()
		if s.i >= len(s.d) {
			return false
		}
		switch s.d[s.i] {
		case ',':
			s.i++
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

// str reads a string without escapes.
func (s *scanner) str() (string, bool) {
	if s.i >= len(s.d) || s.d[s.i] != '"' {
		return "", false
	}
	start := s.i + 1
	for j := start; j < len(s.d); j++ {
		switch s.d[j] {
		case '\\':
			return "", false
		case '"':
			s.i = j + 1
			return string(s.d[start:j]), true
		}
	}
	return "", false
}

func (s *scanner) null() bool {
	if strings.HasPrefix(string(s.d[s.i:min(s.i+4, len(s.d))]), "null") {
		s.i += 4
		return true
	}
	return false
}

// int reads an integer as encoding/json decodes one into an int64.
func (s *scanner) int() (int64, bool) {
	j := s.i
	for j < len(s.d) && (s.d[j] == '-' || s.d[j] == '+' || s.d[j] == '.' || s.d[j] == 'e' || s.d[j] == 'E' || (s.d[j] >= '0' && s.d[j] <= '9')) {
		j++
	}
	n, err := strconv.ParseInt(string(s.d[s.i:j]), 10, 64)
	if err != nil {
		return 0, false
	}
	s.i = j
	return n, true
}

// skip steps over one value of valid JSON: a string, an array or an
// object whole, a number or a literal up to the delimiter after it.
func (s *scanner) skip() bool {
	depth := 0
	for s.i < len(s.d) {
		switch c := s.d[s.i]; c {
		case '"':
			for s.i++; s.i < len(s.d) && s.d[s.i] != '"'; s.i++ {
				if s.d[s.i] == '\\' {
					s.i++
				}
			}
			s.i++
			if depth == 0 {
				return true
			}
		case '{', '[':
			depth++
			s.i++
		case '}', ']':
			if depth == 0 {
				return true // the enclosing object's end, after a scalar
			}
			depth--
			s.i++
			if depth == 0 {
				return true
			}
		case ',':
			if depth == 0 {
				return true
			}
			s.i++
		default:
			s.i++
		}
	}
	return depth == 0
}
