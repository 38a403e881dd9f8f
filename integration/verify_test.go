//go:build linux

package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const verifyConfig = `shell:
  program: /bin/bash
  default: {allowed: true, approval: true}
  rules:
    - {pattern: "git status", approval: false}
sandbox:
  paths:
    workspace: {root: ., mode: rw}
`

// TestRunVerifiesWhatTheAnalysisPreApproved: git status is pre-approved
// because the analysis bounded it, so it runs verified against what the
// analysis predicted, under each backend. A repository whose config
// makes git status run a program (core.fsmonitor) is stopped at that
// exec under --strict: the program does not run, the request ends
// refused with the line saying what was wanted, and the audit record
// says so.
func TestRunVerifiesWhatTheAnalysisPreApproved(t *testing.T) {
	requireSandbox(t)
	for _, backend := range []string{"bwrap", "landlock"} {
		t.Run(backend, func(t *testing.T) {
			w := runWorld(t, verifyConfig)
			git := func(args ...string) {
				cmd := exec.Command("git", args...)
				cmd.Dir = w.work
				cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null")
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("git %v: %v\n%s", args, err, out)
				}
			}
			git("init", "-q")
			os.WriteFile(filepath.Join(w.work, "a.txt"), []byte("a\n"), 0o644)

			stdout, stderr, code := runPlain(t, w, "", nil, "--backend", backend, "--strict", "-c", "git status --short")
			type outcome struct {
				Code     int
				Stdout   string
				Audit    string
				Verified any
			}
			rec := lastAudit(t, w)
			got := outcome{code, stdout, rec["outcome"].(string), rec["verified"]}
			if diff := cmp.Diff(got, outcome{0, "?? a.txt\n", "ran", true}); diff != "" {
				t.Errorf("git status in a plain repository (-got +want):\n%s\nstderr: %s", diff, stderr)
			}

			marker := filepath.Join(w.work, "fsmonitor-ran")
			git("config", "core.fsmonitor", "touch "+marker)
			_, stderr, code = runPlain(t, w, "", nil, "--backend", backend, "--strict", "-c", "git status --short")
			rec = lastAudit(t, w)
			got = outcome{Code: code, Audit: rec["outcome"].(string), Verified: rec["verified"]}
			if diff := cmp.Diff(got, outcome{Code: 77, Audit: "refused", Verified: true}); diff != "" {
				t.Errorf("git status running core.fsmonitor (-got +want):\n%s\nstderr: %s", diff, stderr)
			}
			if exists(marker) {
				t.Error("the program git status was not predicted to run ran")
			}
			const want = "guardrun: refused at run time: git status --short wants to run /bin/sh -c 'touch "
			if !strings.Contains(stderr, want) || !strings.Contains(stderr, "which the analysis did not predict") {
				t.Errorf("stderr does not say what was refused at run time (want %q):\n%s", want, stderr)
			}
			if r, _ := rec["reason"].(string); !strings.HasPrefix(r, "guardrun: refused at run time:") {
				t.Errorf("the audit record's reason is %q", r)
			}
		})
	}
}

// TestServeRunsVerifiedRequestsAtOnce: six pre-approved requests that
// come to one guardrun serve at once all run verified and end, under
// each backend. (Under landlock a verified command's start used to
// route its own exec while Go's fork of it held the runtime: with a few
// starting together, a collection stopped the world and nothing went
// on again.)
func TestServeRunsVerifiedRequestsAtOnce(t *testing.T) {
	requireSandbox(t)
	for _, backend := range []string{"bwrap", "landlock"} {
		t.Run(backend, func(t *testing.T) {
			w := runWorld(t, strings.Replace(verifyConfig, `"git status"`, "echo", 1), "GUARDRUN_BACKEND="+backend)
			script := `for i in 1 2 3 4 5 6; do "$GUARDRUN" -c "echo $i > f$i" & done; wait`
			done := make(chan struct{})
			var code int
			var stderr string
			go func() {
				defer close(done)
				_, stderr, code = runPlain(t, w, "", []string{"GUARDRUN=" + guardrunBin}, "serve", "--", "sh", "-c", script)
			}()
			select {
			case <-done:
			case <-time.After(2 * time.Minute):
				t.Fatal("guardrun serve still runs six echo requests after two minutes")
			}
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			for i := 1; i <= 6; i++ {
				if b, err := os.ReadFile(filepath.Join(w.work, fmt.Sprintf("f%d", i))); err != nil || string(b) != fmt.Sprintf("%d\n", i) {
					t.Errorf("f%d: %q %v", i, b, err)
				}
			}
			data, _ := os.ReadFile(filepath.Join(w.getenv("XDG_STATE_HOME"), "guardrun", "audit.jsonl"))
			if n := strings.Count(string(data), `"verified":true`); n < 6 {
				t.Errorf("%d audit records say verified, want 6 (one per echo):\n%s", n, data)
			}
		})
	}
}

// TestRunVerifiedLeavesThePersonsTerminal: a verified request's opens
// are made by guardrun, whose controlling terminal is the person's; the
// command runs in a session of its own, without one. Its open of
// /dev/tty fails as it does unverified (ENXIO), under each backend, and
// nothing it writes there reaches the person's screen.
func TestRunVerifiedLeavesThePersonsTerminal(t *testing.T) {
	requireSandbox(t)
	w := runWorld(t, strings.Replace(verifyConfig, `"git status"`, "echo", 1))
	script := ""
	for _, b := range []string{"bwrap", "landlock"} {
		script += shq(guardrunBin) + " --backend " + b + " -c 'echo VERIFIED-" + b + "-REACHED > /dev/tty; echo " + b + " $?'; "
	}
	m := startTmux(t, w, nil, script+"echo ALL-DONE")
	s := m.waitScreen(`ALL-DONE`)
	for _, b := range []string{"bwrap", "landlock"} {
		if strings.Contains(s, "VERIFIED-"+b+"-REACHED") {
			t.Errorf("%s: the command's write to /dev/tty reached the person's terminal:\n%s", b, s)
		}
		if !strings.Contains(s, b+" 1") || !strings.Contains(s, "/dev/tty: No such device or address") {
			t.Errorf("%s: the open of /dev/tty did not fail with ENXIO:\n%s", b, s)
		}
	}
	data, _ := os.ReadFile(filepath.Join(w.getenv("XDG_STATE_HOME"), "guardrun", "audit.jsonl"))
	if n := strings.Count(string(data), `"verified":true`); n < 2 {
		t.Errorf("%d records say verified, want 2:\n%s", n, data)
	}
}
