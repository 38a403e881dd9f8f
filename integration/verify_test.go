//go:build linux

package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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

// TestRunVerifiedHeldCallAsks: in interactive mode a held call of a
// verified request is a prompt on the person's terminal, under each
// backend (also when guardrun runs as root and must read other root
// processes to tell whose terminal it is): denied, the program does not
// run and the request ends refused; approved, it runs.
func TestRunVerifiedHeldCallAsks(t *testing.T) {
	requireSandbox(t)
	const config = `shell:
  program: /bin/bash
  default: {allowed: true, approval: true}
  rules:
    - {pattern: "git status", approval: false}
sandbox:
  paths:
    workspace: {root: ., mode: rw}
`
	for _, backend := range []string{"bwrap", "landlock"} {
		for _, key := range []string{"n", "y"} {
			t.Run(backend+" "+key, func(t *testing.T) {
				w := runWorld(t, config)
				marker := filepath.Join(w.work, "fsmonitor-ran")
				for _, args := range [][]string{{"init", "-q"}, {"config", "core.fsmonitor", "touch " + marker}} {
					cmd := exec.Command("git", args...)
					cmd.Dir = w.work
					cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null")
					if out, err := cmd.CombinedOutput(); err != nil {
						t.Fatalf("git %v: %v\n%s", args, err, out)
					}
				}
				r := startPrompt(t, w, nil, "--backend", backend, "-c", "git status --short")
				// Every call held is asked in turn: the hook's shell,
				// then what it runs and writes.
				exited := make(chan int, 1)
				go func() { exited <- r.wait() }()
				asked := 0
				code := -1
				for code < 0 {
					select {
					case code = <-exited:
						continue
					case <-time.After(50 * time.Millisecond):
					}
					if strings.Count(r.screen(), keyLine) <= asked {
						continue
					}
					asked++
					r.send(key)
					if key == "n" {
						r.waitFor("note for the agent", asked)
						r.send("\r")
					}
				}
				if asked == 0 || !strings.Contains(r.screen(), "git status --short wants to run /bin/sh -c 'touch ") {
					t.Errorf("no prompt for the held call (asked %d times); the terminal shows:\n%s\nstderr: %s", asked, r.screen(), r.stderr.String())
				}
				wantCode, wantRan := 77, false
				if key == "y" {
					wantCode, wantRan = 0, true
				}
				if code != wantCode || exists(marker) != wantRan {
					t.Errorf("after %s: exit %d, the program ran: %v; want %d, %v\nstderr: %s", key, code, exists(marker), wantCode, wantRan, r.stderr.String())
				}
			})
		}
	}
}

// TestSuperviseVerifiedHeldCall: under `guardrun supervise` a
// pre-approved request runs verified too (served by the supervisor's
// command server), and a call outside its prediction is asked on the
// supervisor's terminal: denied, the program does not run and the agent
// sees the request refused.
func TestSuperviseVerifiedHeldCall(t *testing.T) {
	requireSandbox(t)
	w := newWorld(t, configWithRules(`    - {pattern: "git status", approval: false}
`))
	marker := filepath.Join(w.work, "fsmonitor-ran")
	for _, args := range [][]string{{"init", "-q"}, {"config", "core.fsmonitor", "touch " + marker}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = w.work
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	tt := startOnTTY(t, w, guardrunBin, "supervise", "--", "sh", fakeAgent(t))
	at := tt.waitFor(0, "fakeagent: ready")
	tt.typ("git status --short\n")
	// Each held call is asked in turn (git tries its hook twice).
	end := regexp.MustCompile(`>>> end \d+: status (\d+)`)
	deadline := time.Now().Add(30 * time.Second)
	asked := 0
	for !end.MatchString(tt.screen()[at:]) {
		if time.Now().After(deadline) {
			t.Fatalf("the request did not end; the terminal shows:\n%s", tt.screen()[at:])
		}
		if prompts(tt.screen()[at:]) > asked {
			asked++
			tt.answer(at, "n")
			tt.waitFor(at, "note for the agent")
			tt.typ("\r")
		}
		time.Sleep(50 * time.Millisecond)
	}
	s := tt.screen()[at:]
	if asked == 0 || !strings.Contains(s, "git status --short wants to run /bin/sh -c 'touch ") {
		t.Errorf("the held call was not asked on the supervisor's terminal:\n%s", s)
	}
	if m := end.FindStringSubmatch(s); m[1] != "77" || !strings.Contains(s, "guardrun: refused at run time: git status --short wants to run") {
		t.Errorf("the agent did not see the request refused at run time:\n%s", s)
	}
	if exists(marker) {
		t.Error("the program git status was not predicted to run ran")
	}
	recs := recordsOf(auditRecords(t, w), "git status --short")
	if len(recs) == 0 || recs[len(recs)-1]["verified"] != true || recs[len(recs)-1]["outcome"] != "refused" {
		t.Errorf("records: %v", recs)
	}
}

// TestServeVerifies: a pre-approved request served by `guardrun serve`
// runs verified like any other, under each backend: a call outside the
// prediction is refused under --strict (the program does not run), and
// several verified requests starting at once through the one server all
// run.
func TestServeVerifies(t *testing.T) {
	requireSandbox(t)
	for _, backend := range []string{"bwrap", "landlock"} {
		t.Run(backend, func(t *testing.T) {
			w := serveWorld(t, strings.Replace(verifyConfig, "sandbox:", "    - {pattern: \"sed -n 1p a.txt\", approval: false}\nsandbox:", 1))
			marker := filepath.Join(w.work, "fsmonitor-ran")
			for _, args := range [][]string{{"init", "-q"}, {"config", "core.fsmonitor", "touch " + marker}} {
				cmd := exec.Command("git", args...)
				cmd.Dir = w.work
				cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null")
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("git %v: %v\n%s", args, err, out)
				}
			}
			if err := os.WriteFile(filepath.Join(w.work, "a.txt"), []byte("a\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			gr := `"$GR" --backend ` + backend + ` --strict -c`
			out, errOut, _ := serveScript(t, w, gr+` 'git status --short'; echo "status $?"; for i in 1 2 3 4; do `+gr+` 'sed -n 1p a.txt' & done; wait`)
			lines := 0
			for _, l := range strings.Split(out, "\n") {
				if l == "a" {
					lines++
				}
			}
			if !strings.Contains(out, "status 77\n") || lines != 4 {
				t.Errorf("served: stdout %q, want status 77 and four lines of a.txt\nstderr: %s", out, errOut)
			}
			if !strings.Contains(errOut, "guardrun: refused at run time: git status --short wants to run /bin/sh -c 'touch ") {
				t.Errorf("stderr does not say what was refused at run time:\n%s", errOut)
			}
			if exists(marker) {
				t.Error("the program git status was not predicted to run ran")
			}
			for _, script := range []string{"git status --short", "sed -n 1p a.txt"} {
				for _, r := range recordsOf(auditRecords(t, w), script) {
					if r["via"] != "server" || r["verified"] != true {
						t.Errorf("%s: a record not served or not verified: %v", script, r)
					}
				}
			}
		})
	}
}
