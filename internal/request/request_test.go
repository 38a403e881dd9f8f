package request

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/rules"
)

// testConfig allows true and echo without asking, blocks rm, and asks
// about everything else; the workspace is the one rw zone.
const testConfig = `shell:
  program: /bin/sh
  default: {allowed: true, approval: true}
  rules:
    - {pattern: "true", approval: false}
    - {pattern: echo, approval: false}
    - {pattern: exit, approval: false}
    - {pattern: rm, allowed: false, description: "no rm here"}
sandbox:
  paths:
    workspace: {root: WORK, mode: rw}
`

// world is a process environment of its own for one test: a home, state
// and config directories, a workspace that is the working directory, and
// a config named as --config names it.
type world struct {
	work, home, config, audit string
}

func newWorld(t *testing.T, config string) *world {
	t.Helper()
	root := t.TempDir()
	w := &world{work: filepath.Join(root, "work"), home: filepath.Join(root, "home")}
	for _, d := range []string{w.work, w.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	w.config = filepath.Join(root, "guardrun.yaml")
	if err := os.WriteFile(w.config, []byte(strings.ReplaceAll(config, "WORK", w.work)), 0o644); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(w.home, ".local", "state")
	w.audit = filepath.Join(state, "guardrun", "audit.jsonl")
	rt := filepath.Join(root, "run")
	if err := os.Mkdir(rt, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", w.home)
	t.Setenv("XDG_STATE_HOME", state)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(w.home, ".config"))
	t.Setenv("XDG_RUNTIME_DIR", rt)
	t.Setenv("GUARDRUN_CONFIG", "")
	t.Setenv("GUARDRUN_SOCKET", "")
	t.Setenv("GUARDRUN_SESSION", "request-test")
	t.Chdir(w.work)
	return w
}

// records reads the audit log.
func (w *world) records(t *testing.T) []approval.Record {
	t.Helper()
	f, err := os.Open(w.audit)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []approval.Record
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r approval.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		out = append(out, r)
	}
	return out
}

// person answers prompts as a person at the terminal would, and counts
// what it was asked.
type person struct {
	approve bool
	note    string
	asked   []string
}

func (p *person) Prompt(_ context.Context, r *approval.Request) (approval.Answer, error) {
	p.asked = append(p.asked, r.Display)
	return approval.Answer{Approve: p.approve, Note: p.note}, nil
}

func testIO() (IO, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb}, &out, &errb
}

// ask decides j and puts it to the gate, as Run does before running.
func ask(t *testing.T, s *Session, j *Job) (*rules.Decision, approval.Outcome) {
	t.Helper()
	io, _, _ := testIO()
	d := s.Decide(j)
	out, err := s.Ask(context.Background(), &approval.Request{Display: s.Display(j), Decision: d, Cwd: s.Dir(j)}, io, nil)
	if err != nil {
		t.Fatalf("Ask(%s): %v", s.Display(j), err)
	}
	return d, out
}

// TestDecideAndAskByMode: the verdict × mode table through the package
// API, without running anything: allow runs, block refuses in every
// mode, ask runs under approve-all, is refused under strict and goes to
// the person under interactive.
func TestDecideAndAskByMode(t *testing.T) {
	w := newWorld(t, testConfig)
	for _, tc := range []struct {
		mode    rules.Mode
		approve bool
		job     *Job
		verdict rules.Verdict
		run     bool
		by      string
		asked   bool
	}{
		{rules.ModeApproveAll, false, &Job{Script: "true"}, rules.Allow, true, "rule", false},
		{rules.ModeApproveAll, false, &Job{Script: "make"}, rules.Ask, true, "mode", false},
		{rules.ModeApproveAll, false, &Job{Argv: []string{"rm", "-rf", "x"}}, rules.Block, false, "policy", false},
		{rules.ModeStrict, false, &Job{Script: "make"}, rules.Ask, false, "mode", false},
		{rules.ModeStrict, false, &Job{Script: "echo hi"}, rules.Allow, true, "rule", false},
		{rules.ModeStrict, false, &Job{Script: "rm x"}, rules.Block, false, "policy", false},
		{rules.ModeInteractive, true, &Job{Script: "make"}, rules.Ask, true, "person", true},
		{rules.ModeInteractive, false, &Job{Script: "make"}, rules.Ask, false, "person", true},
		{rules.ModeInteractive, true, &Job{Script: "rm x"}, rules.Block, false, "policy", false},
	} {
		name := string(tc.mode) + "/" + tc.job.Script + strings.Join(tc.job.Argv, " ")
		t.Run(name, func(t *testing.T) {
			io, _, _ := testIO()
			s, err := OpenForFiles(Options{Config: w.config, Mode: tc.mode}, io)
			if err != nil {
				t.Fatal(err)
			}
			p := &person{approve: tc.approve}
			s.Prompter = p
			d, out := ask(t, s, tc.job)
			if d.Decision != tc.verdict {
				t.Errorf("verdict %s, want %s (%s)", d.Decision, tc.verdict, d.Reason)
			}
			if out.Run != tc.run || out.By != tc.by {
				t.Errorf("outcome run=%v by %q, want run=%v by %q (refusal %q)", out.Run, out.By, tc.run, tc.by, out.Refusal)
			}
			if !out.Run && out.Refusal == "" {
				t.Errorf("a refusal without its line")
			}
			if (len(p.asked) > 0) != tc.asked {
				t.Errorf("the person was asked %v, want asked=%v", p.asked, tc.asked)
			}
		})
	}
}

// TestOpenForFilesNeverRuns: a session opened for file operations did
// not check the OS sandbox, so it refuses every command, audited as
// decided by the sandbox, even one the rules allow.
func TestOpenForFilesNeverRuns(t *testing.T) {
	w := newWorld(t, testConfig)
	io, out, _ := testIO()
	s, err := OpenForFiles(Options{Config: w.config, Mode: rules.ModeApproveAll}, io)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Run(context.Background(), &Job{Script: "echo ran > marker"}, io)
	var ref *Refusal
	if !errors.As(err, &ref) || !strings.Contains(ref.Line, "no OS sandbox") {
		t.Fatalf("Run = %v, want a refusal naming the missing sandbox", err)
	}
	if out.Len() != 0 {
		t.Errorf("stdout %q, want nothing", out.String())
	}
	if _, err := os.Stat(filepath.Join(w.work, "marker")); err == nil {
		t.Errorf("the command ran")
	}
	recs := w.records(t)
	if len(recs) != 1 || recs[0].Outcome != "refused" || recs[0].DecidedBy != "sandbox" || recs[0].Script != "echo ran > marker" {
		t.Fatalf("audit = %+v, want one refused record decided by the sandbox", recs)
	}
}

// TestAuditFillsProcessAndSession: Audit records this process and the
// session for any caller (guardrun fs, the proxy), keeping a session the
// record names.
func TestAuditFillsProcessAndSession(t *testing.T) {
	w := newWorld(t, testConfig)
	io, _, errb := testIO()
	s, err := OpenForFiles(Options{Config: w.config}, io)
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != "request-test" {
		t.Fatalf("session %q, want $GUARDRUN_SESSION's request-test", s.ID)
	}
	s.Audit(approval.Record{Op: "read", Path: "/x", Verdict: "allow", Outcome: "ran", DecidedBy: "rule"}, errb)
	s.Audit(approval.Record{Session: "other", Op: "connect", Verdict: "ask", Outcome: "refused", DecidedBy: "mode"}, errb)
	recs := w.records(t)
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2; stderr %s", len(recs), errb)
	}
	if recs[0].PID != os.Getpid() || recs[0].Session != "request-test" || recs[0].Op != "read" {
		t.Errorf("first record %+v, want this pid and session request-test", recs[0])
	}
	if recs[1].Session != "other" {
		t.Errorf("second record's session %q, want the one it named", recs[1].Session)
	}
}

// TestOpenRefusesStateInsideZone: the session's state (grants, trust,
// audit) cannot be put inside an rw zone by the environment.
func TestOpenRefusesStateInsideZone(t *testing.T) {
	w := newWorld(t, testConfig)
	t.Setenv("XDG_STATE_HOME", filepath.Join(w.work, "state"))
	io, _, _ := testIO()
	_, err := Open(Options{Config: w.config}, io)
	if err == nil || !strings.Contains(err.Error(), "$XDG_STATE_HOME") {
		t.Fatalf("Open = %v, want a refusal naming $XDG_STATE_HOME", err)
	}
}

// TestNoPerson: a session that may not ask anyone (guardrun serve) fails
// a request that would prompt with ErrNeedsPerson, before Commit and
// before any record; one the session's grants cover, or that needs no
// person, goes on to Commit.
func TestNoPerson(t *testing.T) {
	w := newWorld(t, testConfig)
	io, _, _ := testIO()
	s, err := OpenForFiles(Options{Config: w.config, Mode: rules.ModeInteractive}, io)
	if err != nil {
		t.Fatal(err)
	}
	// Nothing runs: every Commit below stops the run.
	s.NoSandbox = nil
	s.NoPerson = true
	p := &person{approve: true}
	s.Prompter = p
	commits := 0
	stop := errors.New("stop at commit")
	job := func(script string) *Job {
		return &Job{Script: script, Commit: func() error { commits++; return stop }}
	}
	if err := s.Run(context.Background(), job("make"), io); !errors.Is(err, ErrNeedsPerson) {
		t.Fatalf("an ask: %v, want ErrNeedsPerson", err)
	}
	if commits != 0 || len(p.asked) != 0 || len(w.records(t)) != 0 {
		t.Fatalf("an ask: %d commits, asked %v, records %v", commits, p.asked, w.records(t))
	}
	if err := s.Run(context.Background(), job("true"), io); err != stop || commits != 1 {
		t.Fatalf("an allowed job: %v, %d commits", err, commits)
	}
	if s.Store == nil {
		t.Fatal("no session store")
	}
	d := s.Decide(&Job{Script: "make"})
	if err := s.Store.Add(approval.Grant{Key: approval.RequestKey(d, w.work), Summary: "make", Where: w.work}); err != nil {
		t.Fatal(err)
	}
	if err := s.Run(context.Background(), job("make"), io); err != stop || commits != 2 || len(p.asked) != 0 {
		t.Fatalf("a granted ask: %v, %d commits, asked %v", err, commits, p.asked)
	}
	if len(w.records(t)) != 0 {
		t.Errorf("records before any commit: %v", w.records(t))
	}
}
