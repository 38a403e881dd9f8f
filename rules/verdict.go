package rules

import (
	"fmt"
)

// Verdict is the outcome of a check. The order matters: a larger verdict
// is stricter, and a script's verdict is the strictest of its parts.
type Verdict int

const (
	Allow Verdict = iota // pre-approved by a rule or zone
	Ask                  // needs a person's consent
	Block                // never allowed
)

func (v Verdict) String() string {
	switch v {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	case Block:
		return "block"
	}
	return fmt.Sprintf("Verdict(%d)", int(v))
}

// MarshalText writes the verdict's name, as `explain --json` shows it.
func (v Verdict) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// UnmarshalText reads a verdict's name.
func (v *Verdict) UnmarshalText(b []byte) error {
	switch string(b) {
	case "allow":
		*v = Allow
	case "ask":
		*v = Ask
	case "block":
		*v = Block
	default:
		return fmt.Errorf("unknown verdict %q", b)
	}
	return nil
}
