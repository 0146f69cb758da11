package drill

import "testing"

// TestPatternKeys: keys made from a key_pattern match it and stay
// distinct per token; a pattern with no room for a token is refused.
func TestPatternKeys(t *testing.T) {
	for _, pattern := range []string{
		"^evt_[A-Za-z0-9]+:crm_task$",
		`^m-[0-9a-f]{6,40}(:[a-z]+)?$`,
		`^ord-\d{8}$`,
		`(?i)^INV/[A-Z]{3}-\w+$`,
		`[a-z]+`,
		`^(shop|crm)_.+@?$`,
	} {
		p, err := newPatternKeys(pattern)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]string{}
		for _, token := range []string{"drill-a-1:case1", "drill-a-1:case2", "drill-a-1:case7:parent", "drill-a-1:case7:child", "drill-b-2:case1"} {
			k, err := p.key(token)
			if err != nil {
				t.Fatalf("%s: %v", pattern, err)
			}
			if !p.matches(k) {
				t.Fatalf("%s: made %q, which does not match", pattern, k)
			}
			if other, dup := seen[k]; dup {
				t.Fatalf("%s: %q made for %s and %s", pattern, k, other, token)
			}
			seen[k] = token
		}
	}
	for _, pattern := range []string{"^fixed-key$", `^[0-9]{3}$`} {
		p, _ := newPatternKeys(pattern)
		if k, err := p.key("drill"); err == nil {
			t.Fatalf("%s: made %q; a pattern with no room for distinct keys must be refused", pattern, k)
		}
	}
}
