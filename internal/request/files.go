package request

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/rules"
)

// DecideFile is the policy's verdict on one file operation that guardrun
// performs itself, outside the OS sandbox (guardrun fs): the file zones'
// verdict on path, taken from the working directory, with the path as
// resolved (what is then touched) in the part. guardrun's own files are
// kept out of reach: the sandbox never lets a command write them, and an
// operation outside it must not be the way around that.
func (s *Session) DecideFile(op rules.Op, path string) rules.Part {
	cwd := s.Env.Cwd
	p := s.Loaded.Engine.File(op, path, cwd)
	if p.Decision == rules.Block {
		return p
	}
	for _, pr := range s.Protected(cwd) {
		abs := pr.Path
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(cwd, abs)
		}
		if !rules.Within(p.Path, filepath.Clean(abs)) && !rules.Within(p.Path, rules.Resolve(abs, "/")) {
			continue
		}
		if op != rules.OpRead {
			p.Decision = rules.Block
			p.Reason = fmt.Sprintf("%s %s: guardrun's own config and state (%s) cannot be changed through guardrun fs", op, path, pr.Path)
			return p
		}
		if pr.Hide {
			p.Decision = rules.Block
			p.Reason = fmt.Sprintf("read %s: guardrun's own state (%s) is not readable through guardrun fs", path, pr.Path)
			return p
		}
	}
	return p
}

// Combine makes the parts of one file operation (an edit is a read and a
// write) one decision: the strictest verdict and its reason.
func Combine(parts ...rules.Part) *rules.Decision {
	d := &rules.Decision{Parts: parts}
	for _, p := range parts {
		d.Decision = max(d.Decision, p.Decision)
	}
	for _, p := range parts {
		if p.Decision == d.Decision {
			d.Reason = p.Reason
			break
		}
	}
	return d
}

// FileGrantKey is the session grant key of a file operation's asking
// parts: zone, operation and path, never content. An edit asking for both
// its read and its write gets one key for the pair, so a grant for either
// alone never covers it. Parts on more than one path or zone (a move, a
// patch of several files) get a key of every zone, operation and path,
// so a grant for some of them never covers others beside them. "" when
// nothing asks.
func FileGrantKey(d *rules.Decision) string {
	asking := d.Asking()
	switch len(asking) {
	case 0:
		return ""
	case 1:
		return approval.FileKey(asking[0].Zone, asking[0].Op, asking[0].Path)
	}
	zones := make([]string, len(asking))
	ops := make([]string, len(asking))
	paths := make([]string, len(asking))
	for i, p := range asking {
		zones[i], ops[i], paths[i] = p.Zone, p.Op, p.Path
	}
	if !slices.ContainsFunc(asking, func(p rules.Part) bool { return p.Zone != zones[0] || p.Path != paths[0] }) {
		return approval.FileKey(zones[0], strings.Join(ops, "+"), paths[0])
	}
	return approval.FilesKey(zones, ops, paths)
}

// ToolsRefused says why every operation must be refused when the config
// says os_sandbox_fallback: refuse_tools (with require_os_sandbox) and no
// OS sandbox works here; nil otherwise. A file operation runs outside the
// sandbox, but a config that refuses tools without one means all of them.
// A session from Open knows already (NoSandbox); one from OpenForFiles
// checks the backend now, the same choice as for a command.
func (s *Session) ToolsRefused() error {
	sb := s.Loaded.Cfg.Sandbox
	if !sb.RequireOSSandbox || sb.Fallback != rules.RefuseTools {
		return nil
	}
	_, err := ChooseBackend(s.Opts, s.Loaded, s.Env)
	return err
}
