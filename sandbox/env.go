package sandbox

import (
	"path"
	"strings"
)

// CommandEnv returns the environment for a command in the sandbox: env
// without the variables whose names match one of p.EnvDeny (path.Match on
// the name), and with the variables that describe the host rather than
// the sandbox dropped or reset. Later duplicates win, as in exec.Cmd. The
// bwrap and landlock backends start their commands with it.
func CommandEnv(p *Profile, env []string) []string {
	out := make([]string, 0, len(env)+1)
	seen := map[string]int{}
	for _, kv := range env {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		if hostOnly[name] || envDenied(name, p.EnvDeny) {
			continue
		}
		if i, dup := seen[name]; dup {
			out[i] = kv
			continue
		}
		seen[name] = len(out)
		out = append(out, kv)
	}
	if p.PrivateTmp {
		// The host's TMPDIR names a directory the sandbox does not have.
		out = append(out, "TMPDIR=/tmp")
	}
	return out
}

// hostOnly are variables that describe the host side: the sandbox sets
// its own (bwrap: HOME through --setenv, PWD by bwrap itself; landlock:
// the profile's) or has none.
var hostOnly = map[string]bool{
	"TMPDIR": true,
	"HOME":   true,
	"PWD":    true,
	"OLDPWD": true,
}

func envDenied(name string, globs []string) bool {
	for _, g := range globs {
		if ok, err := path.Match(g, name); ok || err != nil {
			// A malformed pattern (Validate rejects them) fails closed.
			return true
		}
	}
	return false
}
