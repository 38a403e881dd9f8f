//go:build linux

package integration

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guardrun/guardrun/internal/testing/fakemodel"
)

// TestAgentsRewriteKeepsTheCommandWhole drives each agent's own shell
// wrapping (Claude Code's eval of a snapshot, Codex's login wrapper,
// Gemini CLI's subshell with its trap) with commands whose quotes,
// newlines, here-documents, comments and bytes try to break out of the
// single-quoted argument guardrun's rewrite gives them: guardrun gets
// each command whole (or the agent refuses it before the hook), and
// nothing of it runs outside the sandbox.
func TestAgentsRewriteKeepsTheCommandWhole(t *testing.T) {
	payloads := []string{
		"x'; echo pwned > PWNED; '",
		`x"; echo pwned > PWNED; "`,
		"echo $(echo pwned > PWNED) `echo pwned > PWNED`",
		"echo a\necho pwned > PWNED",
		`echo '\''; echo pwned > PWNED; echo '\''`,
		"echo \\'; echo pwned > PWNED #",
		"cat <<'EOF'\n'; echo pwned > PWNED; '\nEOF",
		"cat <<EOF\n$(echo pwned > PWNED)\nEOF",
		"cat <<-EOF\n\t'\"; echo pwned > PWNED\n\tEOF",
		"echo $'\\x27; echo pwned > PWNED; \\x27'",
		"echo ok # '; echo pwned > PWNED; '",
		"echo ok } ; echo pwned > PWNED ; {",
		"echo ok) ; echo pwned > PWNED ; (",
		"echo ok\r\necho pwned > PWNED",
		"echo '\\\\'; echo pwned > PWNED; '",
		"echo \u00a0'; echo pwned > PWNED; '",
		"echo \\\n'; echo pwned > PWNED; '",
		"echo ok; exit 0\n'; echo pwned > PWNED; '",
		"echo ok < /dev/null ' && echo pwned > PWNED '",
		"echo ok\x1b]0;title\x07'; echo pwned > PWNED; '",
		"echo ok EOF\nEOF\n'; echo pwned > PWNED; '",
		"echo ok\n)\necho pwned > PWNED\n(",
	}
	for _, a := range agentsUnderTest {
		t.Run(a.Name, func(t *testing.T) {
			var pwned string
			var commands []string
			r := newRigWith(t, a, openRules, func(r *rig) []fakemodel.Step {
				// Outside every zone: only a command run outside the
				// sandbox makes it.
				pwned = filepath.Join(filepath.Dir(r.w.Home), "pwned.txt")
				var steps []fakemodel.Step
				for _, p := range payloads {
					c := strings.ReplaceAll(p, "PWNED", pwned)
					commands = append(commands, c)
					steps = append(steps, a.Shell(c))
				}
				return append(steps, fakemodel.Say("done"))
			})
			if out, code := r.guardrun("integrate", r.agentName()); code != 0 {
				t.Fatalf("integrate: %d %s", code, out)
			}
			out := r.run()
			if fileExists(pwned) {
				t.Errorf("a command ran outside the sandbox:\n%s", out)
			}
			seen := map[string]bool{}
			for _, rec := range r.records() {
				if rec.Via == r.agentName() {
					seen[rec.Script] = true
				}
			}
			for i, c := range commands {
				// Claude Code refuses a command with control characters
				// itself, before any hook: nothing runs.
				refused := strings.Contains(r.result(i), "InputValidationError")
				if !seen[c] && !refused {
					t.Errorf("step %d: guardrun has no record of %q; the agent got %.200q", i, c, r.result(i))
				}
			}
			if t.Failed() {
				var b strings.Builder
				for _, rec := range r.records() {
					fmt.Fprintf(&b, "  %s %q\n", rec.Outcome, rec.Script)
				}
				t.Logf("audit:\n%s", b.String())
			}
		})
	}
}
