package seatbelt

import (
	"fmt"
	"path"
	"strings"
)

// filterEnv drops the entries of env whose name matches one of the deny
// globs (path.Match syntax; names are compared case-sensitively, as macOS
// does). Entries without "=" are dropped too: they have no name to check,
// and execve would pass them on verbatim. A malformed glob is an error, not
// a silent no-op, so a typo in a secrets list cannot expose the secrets.
// The result is never nil, because a nil exec.Cmd.Env means "inherit
// everything".
func filterEnv(env, deny []string) ([]string, error) {
	for _, g := range deny {
		if _, err := path.Match(g, ""); err != nil {
			return nil, fmt.Errorf("seatbelt: env_deny pattern %q: %w", g, err)
		}
	}
	out := make([]string, 0, len(env))
next:
	for _, kv := range env {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		for _, g := range deny {
			if m, _ := path.Match(g, name); m {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out, nil
}

// setEnv replaces every entry named name (there may be several; the C
// library would pick the first, other readers the last) with one entry.
func setEnv(env []string, name, value string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if n, _, _ := strings.Cut(kv, "="); n != name {
			out = append(out, kv)
		}
	}
	return append(out, name+"="+value)
}
