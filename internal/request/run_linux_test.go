//go:build linux

package request

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guardrun/guardrun/internal/testing/testenv"
	"github.com/guardrun/guardrun/rules"
	"github.com/guardrun/guardrun/runner"
	"github.com/guardrun/guardrun/sandbox"
)

// openSandboxed opens a session that runs commands under bwrap, or ends
// t when bwrap cannot start here.
func openSandboxed(t *testing.T, w *world, mode rules.Mode) (*Session, IO) {
	t.Helper()
	if _, err := runner.Choose(runner.BackendBwrap, runner.Config{}); err != nil {
		testenv.Missing(t, "bwrap sandbox unavailable: %v", err)
	}
	io, _, _ := testIO()
	s, err := Open(Options{Config: w.config, Mode: mode, Backend: rules.BackendBwrap}, io)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Sandboxed || s.Backend == nil || s.Backend.Name() != runner.BackendBwrap {
		t.Fatalf("session sandboxed=%v backend %v, want bwrap", s.Sandboxed, s.Backend)
	}
	return s, io
}

// TestRunSandboxed: Run carries a job through decision, gate, sandbox
// and audit. What the rules allow runs in the sandbox (it writes in the
// workspace, not outside it) and leaves a started and an ended record
// with one run id; the command's status comes back as an *ExitStatus; a
// job strict mode refuses, or the rules block, does not run and is
// audited as refused.
func TestRunSandboxed(t *testing.T) {
	w := newWorld(t, testConfig)
	s, io := openSandboxed(t, w, rules.ModeStrict)
	outside := filepath.Join(w.home, "outside")
	ctx := context.Background()

	if err := s.Run(ctx, &Job{Script: "echo in > inside; echo out > " + outside + " 2>/dev/null; true"}, io); err != nil {
		t.Fatalf("Run(echo): %v; stderr %s", err, io.Stderr)
	}
	if data, err := os.ReadFile(filepath.Join(w.work, "inside")); err != nil || string(data) != "in\n" {
		t.Errorf("workspace file: %q, %v; want it written by the command", data, err)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Errorf("the command wrote %s, outside every zone", outside)
	}

	err := s.Run(ctx, &Job{Script: "exit 3"}, io)
	var st *ExitStatus
	if !errors.As(err, &st) || st.Code != 3 {
		t.Errorf("Run(exit 3) = %v, want *ExitStatus 3", err)
	}

	err = s.Run(ctx, &Job{Script: "make > made"}, io)
	var ref *Refusal
	if !errors.As(err, &ref) || !strings.Contains(ref.Line, "strict") {
		t.Errorf("Run(make) in strict mode = %v, want a refusal naming strict mode", err)
	}
	err = s.Run(ctx, &Job{Argv: []string{"rm", "inside"}}, io)
	if !errors.As(err, &ref) {
		t.Errorf("Run(rm) = %v, want a refusal", err)
	}
	if _, err := os.Stat(filepath.Join(w.work, "made")); err == nil {
		t.Errorf("a refused command ran")
	}
	if _, err := os.Stat(filepath.Join(w.work, "inside")); err != nil {
		t.Errorf("a blocked rm ran: %v", err)
	}

	recs := w.records(t)
	var got []string
	for _, r := range recs {
		got = append(got, r.Outcome+":"+r.Verdict+":"+r.DecidedBy+":"+r.Sandbox)
	}
	want := []string{
		"started:allow:rule:bwrap", "ran:allow:rule:bwrap",
		"started:allow:rule:bwrap", "ran:allow:rule:bwrap",
		"refused:ask:mode:", "refused:block:policy:",
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("audit outcomes\n got %v\nwant %v", got, want)
	}
	if recs[0].Run == "" || recs[0].Run != recs[1].Run || recs[2].Run == recs[0].Run {
		t.Errorf("run ids %q %q %q: a start and its end share one, runs differ", recs[0].Run, recs[1].Run, recs[2].Run)
	}
	if recs[3].Exit == nil || *recs[3].Exit != 3 {
		t.Errorf("end record of exit 3: exit %v", recs[3].Exit)
	}
	if len(recs[5].Argv) != 2 || recs[5].Argv[0] != "rm" {
		t.Errorf("the argv job is recorded as %+v", recs[5])
	}
	for _, r := range recs {
		if r.Session != "request-test" || r.Cwd != w.work {
			t.Errorf("record %+v: want session request-test and cwd %s", r, w.work)
		}
	}
}

// TestRunApproveAll: approve-all runs what asks, in the sandbox, decided
// by the mode; the job's own directory and environment are used.
func TestRunApproveAll(t *testing.T) {
	w := newWorld(t, testConfig)
	s, io := openSandboxed(t, w, rules.ModeApproveAll)
	sub := filepath.Join(w.work, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	j := &Job{Script: `printf %s "$GREETING" > greeting`, Cwd: sub, Environ: append(os.Environ(), "GREETING=hello")}
	if err := s.Run(context.Background(), j, io); err != nil {
		t.Fatalf("Run: %v; stderr %s", err, io.Stderr)
	}
	if data, err := os.ReadFile(filepath.Join(sub, "greeting")); err != nil || string(data) != "hello" {
		t.Errorf("sub/greeting: %q, %v; want hello written in the job's directory", data, err)
	}
	recs := w.records(t)
	if len(recs) != 2 || recs[1].Outcome != "ran" || recs[1].DecidedBy != "mode" || recs[1].Verdict != "ask" || recs[1].Cwd != sub {
		t.Fatalf("audit %+v, want started and ran, decided by the mode, in %s", recs, sub)
	}
}

// TestRunVerified: a job with a prediction runs verified: what the
// prediction allows is made, a write outside it is held, refused in
// strict mode, and the request ends refused with the line that says
// what wanted what, audited as refused.
func TestRunVerified(t *testing.T) {
	w := newWorld(t, testConfig)
	s, io := openSandboxed(t, w, rules.ModeStrict)
	script := "echo in > inside; echo out > other; true"
	j := &Job{Script: script, Prediction: &sandbox.Prediction{
		Exec:  []sandbox.Exec{{Program: "sh", Args: []sandbox.Word{{Text: "-c"}, {Text: script}}, Part: "the script"}},
		Write: []sandbox.PathPattern{{Path: filepath.Join(w.work, "inside")}},
	}}
	err := s.Run(context.Background(), j, io)
	var ref *Refusal
	want := "guardrun: refused at run time: the script wants to create " + filepath.Join(w.work, "other") + ", which the analysis did not predict"
	if !errors.As(err, &ref) || !strings.HasPrefix(ref.Line, want) {
		t.Fatalf("Run = %v, want a refusal %q", err, want)
	}
	if data, err := os.ReadFile(filepath.Join(w.work, "inside")); err != nil || string(data) != "in\n" {
		t.Errorf("the predicted write: %q, %v", data, err)
	}
	if _, err := os.Stat(filepath.Join(w.work, "other")); err == nil {
		t.Errorf("the held write was made")
	}
	recs := w.records(t)
	if last := recs[len(recs)-1]; last.Outcome != "refused" || !strings.HasPrefix(last.Reason, want) {
		t.Errorf("audit %+v, want refused with the line", last)
	}
	// Everything predicted: it runs.
	j = &Job{Script: "echo in > inside", Prediction: &sandbox.Prediction{
		Exec:  []sandbox.Exec{{Program: "sh", Args: []sandbox.Word{{Text: "-c"}, {Text: "echo in > inside"}}}},
		Write: []sandbox.PathPattern{{Path: filepath.Join(w.work, "inside")}},
	}}
	if err := s.Run(context.Background(), j, io); err != nil {
		t.Errorf("a predicted job: %v", err)
	}
}
