package approval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/guardrun/guardrun/internal/testing/testenv"
)

// childEnv names the role of a re-executed test binary. Concurrency tests
// start the test binary again as child processes, because goroutines
// alone never show what separate processes sharing a file do.
const childEnv = "GUARDRUN_APPROVAL_TEST_CHILD"

func TestMain(m *testing.M) {
	if role := os.Getenv(childEnv); role != "" {
		if err := runChild(role); err != nil {
			fmt.Fprintf(os.Stderr, "child %s: %v\n", role, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runChild is the body of a child process. Children that race wait until
// their stdin closes, so that all of them start writing together.
func runChild(role string) error {
	env := func(k string) string { return os.Getenv("TEST_" + k) }
	atoi := func(k string) int { n, _ := strconv.Atoi(env(k)); return n }
	switch role {
	case "audit-append":
		io.Copy(io.Discard, os.Stdin)
		return appendWorker(OpenAudit(env("PATH")), "c"+env("ID"), atoi("N"), atoi("BIG_EVERY"))
	case "store-add":
		io.Copy(io.Discard, os.Stdin)
		s, err := OpenStore(env("DIR"), env("SESSION"), 0)
		if err != nil {
			return err
		}
		return addWorker(s, "c"+env("ID"), atoi("N"))
	case "session-id":
		id, ok := SessionID("", func(string) string { return "" })
		fmt.Printf("%d %t %s\n", os.Getpid(), ok, id)
		return nil
	}
	return fmt.Errorf("unknown role %q", role)
}

// startChildren starts n children in role, each with TEST_ID=i and env.
// They block until release is called; wait reports their failures.
func startChildren(t *testing.T, role string, n int, env ...string) (release func(), wait func()) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var cmds []*exec.Cmd
	var stdins []io.Closer
	var outs []*bytes.Buffer
	for i := range n {
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), childEnv+"="+role, "TEST_ID="+strconv.Itoa(i))
		cmd.Env = append(cmd.Env, env...)
		out := new(bytes.Buffer)
		cmd.Stdout, cmd.Stderr = out, out
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, stdins, outs = append(cmds, cmd), append(stdins, in), append(outs, out)
	}
	release = func() {
		for _, in := range stdins {
			in.Close()
		}
	}
	wait = func() {
		t.Helper()
		for i, cmd := range cmds {
			if err := cmd.Wait(); err != nil {
				t.Errorf("child %d: %v\n%s", i, err, outs[i])
			}
		}
	}
	t.Cleanup(func() {
		for _, cmd := range cmds {
			if cmd.ProcessState == nil {
				cmd.Process.Kill()
				cmd.Wait()
			}
		}
	})
	return release, wait
}

// testScript is the script of the record noted note; every bigEvery-th
// record gets one far above PIPE_BUF and the 64 KiB of a pipe buffer.
func testScript(note string, big bool) string {
	if !big {
		return "echo " + note
	}
	return strings.Repeat(note+";", 100<<10/(len(note)+1)+1)
}

func isBig(j, bigEvery int) bool { return bigEvery > 0 && j%bigEvery == 0 }

func appendWorker(a *Audit, who string, n, bigEvery int) error {
	for j := range n {
		note := fmt.Sprintf("%s-%d", who, j)
		r := Record{Session: "race", Cwd: "/w", Script: testScript(note, isBig(j, bigEvery)),
			Verdict: "ask", Outcome: "ran", DecidedBy: "person", Note: note}
		if err := a.Append(r); err != nil {
			return err
		}
	}
	return nil
}

// raceAppends has goroutines and child processes append at once, then
// checks that the log holds exactly their records, each on its own line.
func raceAppends(t *testing.T, goroutines, children, perWorker, bigEvery int) {
	path := filepath.Join(t.TempDir(), "state", "audit.jsonl")
	release, wait := startChildren(t, "audit-append", children,
		"TEST_PATH="+path, "TEST_N="+strconv.Itoa(perWorker), "TEST_BIG_EVERY="+strconv.Itoa(bigEvery))
	a := OpenAudit(path)
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for i := range goroutines {
		wg.Go(func() {
			<-start
			errs <- appendWorker(a, fmt.Sprintf("g%d", i), perWorker, bigEvery)
		})
	}
	release()
	close(start)
	wg.Wait()
	wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(data, []byte("\n")) {
		t.Errorf("log does not end in a newline")
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	want := (goroutines + children) * perWorker
	if len(lines) != want {
		t.Fatalf("log has %d lines, want %d", len(lines), want)
	}
	seen := map[string]bool{}
	for i, l := range lines {
		var r Record
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("line %d is not one record (interleaved?): %v\n%.200s", i+1, err, l)
		}
		j, _ := strconv.Atoi(r.Note[strings.LastIndexByte(r.Note, '-')+1:])
		if got, want := r.Script, testScript(r.Note, isBig(j, bigEvery)); got != want {
			t.Fatalf("line %d: script of %s damaged: %d bytes, want %d", i+1, r.Note, len(got), len(want))
		}
		if seen[r.Note] {
			t.Fatalf("line %d: record %s written twice", i+1, r.Note)
		}
		seen[r.Note] = true
	}
	recs, err := ReadAudit(path, Filter{})
	if err != nil {
		t.Fatalf("ReadAudit: %v", err)
	}
	if len(recs) != want {
		t.Errorf("ReadAudit read %d records, want %d", len(recs), want)
	}
}

func TestAuditAppendConcurrentGoroutinesAndProcessesKeepsEveryLineWhole(t *testing.T) {
	raceAppends(t, 100, 20, 5, 5)
}

func TestAuditAppendBigRecordsNeverInterleave(t *testing.T) {
	raceAppends(t, 16, 4, 4, 1)
}

func TestAuditAppendCreatesPrivateFilesOnFirstRecord(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "guardrun")
	path := filepath.Join(dir, "audit.jsonl")
	a := OpenAudit(path)
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("OpenAudit created %s before any record: %v", dir, err)
	}
	if err := a.Append(Record{Verdict: "allow", Outcome: "ran", DecidedBy: "rule"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want fs.FileMode
	}{{dir, fs.ModeDir | 0o700}, {path, 0o600}} {
		fi, err := os.Stat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode(); got != c.want {
			t.Errorf("%s: mode %v, want %v", c.path, got, c.want)
		}
	}
}

func TestAuditRecordsRoundTripAsOneLineEach(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a := OpenAudit(path)
	zero, one := 0, 1
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 123456789, time.UTC)
	recs := []Record{
		{Time: t0, Session: "s1", Cwd: "/w", Script: "ls > f && echo '<b>'\nrm -rf x\u2028\x1b[2J", Verdict: "ask", Outcome: "ran",
			DecidedBy: "person", Rule: "rm", Reason: "deletes files", Note: "ok", Sandbox: "bwrap", Exit: &zero, DurationMS: 12.5, PID: 42},
		{Time: t0.Add(time.Second), Session: "s1", Cwd: "/w", Argv: []string{"rm", "a b", ""}, Verdict: "block", Outcome: "refused",
			DecidedBy: "policy", PID: 43},
		{Time: t0.Add(2 * time.Second), Session: "s2", Cwd: "/w", Op: "write", Path: "notes/x.txt", Bytes: 120, Verdict: "ask",
			Outcome: "failed", DecidedBy: "session", Sandbox: "none", Exit: &one, PID: 44},
	}
	for _, r := range recs {
		if err := a.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(data, []byte("\n")); n != len(recs) {
		t.Errorf("%d records took %d lines:\n%s", len(recs), n, data)
	}
	if !bytes.Contains(data, []byte(`ls > f && echo '<b>'`)) {
		t.Errorf("shell text is escaped for HTML, which no one reading the log wants:\n%s", data)
	}
	got, err := ReadAudit(path, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, recs); diff != "" {
		t.Errorf("ReadAudit (-got +want):\n%s", diff)
	}
}

func TestAuditAppendFillsTimeAndPID(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	before := time.Now()
	if err := OpenAudit(path).Append(Record{Verdict: "allow"}); err != nil {
		t.Fatal(err)
	}
	got, err := ReadAudit(path, Filter{})
	if err != nil || len(got) != 1 {
		t.Fatalf("ReadAudit = %v, %v", got, err)
	}
	if got[0].PID != os.Getpid() {
		t.Errorf("PID = %d, want %d", got[0].PID, os.Getpid())
	}
	if got[0].Time.Before(before.Add(-time.Second)) || got[0].Time.After(time.Now().Add(time.Second)) {
		t.Errorf("Time = %v, want about %v", got[0].Time, before)
	}
}

func TestAuditAppendRefusesUnsafeLogFiles(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, path string)
		wantErr string
	}{
		{
			name: "symlink to a file",
			setup: func(t *testing.T, path string) {
				target := filepath.Join(filepath.Dir(path), "elsewhere")
				mustWrite(t, target, "precious\n", 0o600)
				mustSymlink(t, target, path)
			},
			wantErr: "is a symlink",
		},
		{
			name:    "dangling symlink",
			setup:   func(t *testing.T, path string) { mustSymlink(t, filepath.Join(filepath.Dir(path), "new"), path) },
			wantErr: "is a symlink",
		},
		{
			name:    "group-writable file",
			setup:   func(t *testing.T, path string) { mustWrite(t, path, "", 0o620) },
			wantErr: "writable by group or others",
		},
		{
			name:    "world-writable file",
			setup:   func(t *testing.T, path string) { mustWrite(t, path, "", 0o602) },
			wantErr: "writable by group or others",
		},
		{
			name:    "directory",
			setup:   func(t *testing.T, path string) { os.Mkdir(path, 0o700) },
			wantErr: "is a directory",
		},
		{
			name: "fifo",
			setup: func(t *testing.T, path string) {
				if err := syscall.Mkfifo(path, 0o600); err != nil {
					testenv.Missing(t, "no mkfifo: %v", err)
				}
			},
			wantErr: "not a regular file",
		},
		{
			name: "file of another user",
			setup: func(t *testing.T, path string) {
				mustWrite(t, path, "", 0o600)
				chownOrSkip(t, path)
			},
			wantErr: "not by you",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			tt.setup(t, path)
			err := OpenAudit(path).Append(Record{Verdict: "allow"})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Append error = %v, want one containing %q", err, tt.wantErr)
			}
			if target := filepath.Join(filepath.Dir(path), "elsewhere"); fileExists(target) {
				if b, _ := os.ReadFile(target); string(b) != "precious\n" {
					t.Errorf("symlink target was written: %q", b)
				}
			}
			if fileExists(filepath.Join(filepath.Dir(path), "new")) {
				t.Errorf("dangling symlink was followed and its target created")
			}
		})
	}
}

func TestAuditAppendStartsAFreshLineAfterATornRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	mustWrite(t, path, `{"session":"a","verdict":"allow"}`+"\n"+`{"session":"b","ver`, 0o600)
	if err := OpenAudit(path).Append(Record{Session: "c", Verdict: "ask"}); err != nil {
		t.Fatal(err)
	}
	got, err := ReadAudit(path, Filter{})
	var bad *MalformedError
	if !errors.As(err, &bad) || bad.Count != 1 || bad.Lines[0].Line != 2 {
		t.Fatalf("ReadAudit error = %v, want line 2 malformed", err)
	}
	var sessions []string
	for _, r := range got {
		sessions = append(sessions, r.Session)
	}
	if diff := cmp.Diff(sessions, []string{"a", "c"}); diff != "" {
		t.Errorf("records (-got +want):\n%s", diff)
	}
}

func TestReadAuditFilters(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	a := OpenAudit(path)
	for i, s := range []string{"a", "b", "a", "a", "b", "a"} {
		if err := a.Append(Record{Session: s, Note: strconv.Itoa(i), PID: 1, Time: time.Unix(int64(i), 0)}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name   string
		filter Filter
		want   string
	}{
		{"everything", Filter{}, "a0 b1 a2 a3 b4 a5"},
		{"one session", Filter{Session: "b"}, "b1 b4"},
		{"last n", Filter{Last: 2}, "b4 a5"},
		{"last n of a session", Filter{Session: "a", Last: 3}, "a2 a3 a5"},
		{"last more than there are", Filter{Session: "b", Last: 10}, "b1 b4"},
		{"unknown session", Filter{Session: "zz"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			recs, err := ReadAudit(path, tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range recs {
				got = append(got, r.Session+r.Note)
			}
			if diff := cmp.Diff(strings.Join(got, " "), tt.want); diff != "" {
				t.Errorf("(-got +want):\n%s", diff)
			}
		})
	}
}

func TestReadAuditReturnsGoodRecordsAndNamesMalformedLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	mustWrite(t, path, strings.Join([]string{
		`{"session":"a","note":"1"}`,
		`not json`,
		``,
		`{"session":"a","note":"4"}`,
		`["an","array"]`,
		`{"session":"a","note":`,
		`{"session":"a","note":"7"}`,
	}, "\n")+"\n", 0o600)
	recs, err := ReadAudit(path, Filter{})
	var bad *MalformedError
	if !errors.As(err, &bad) {
		t.Fatalf("error = %v, want a *MalformedError", err)
	}
	var lines []int
	for _, l := range bad.Lines {
		lines = append(lines, l.Line)
	}
	if diff := cmp.Diff(lines, []int{2, 5, 6}); diff != "" {
		t.Errorf("malformed lines (-got +want):\n%s", diff)
	}
	if !strings.Contains(err.Error(), path+":2:") || !strings.Contains(err.Error(), "2 more") {
		t.Errorf("error %q does not name the first line and the count", err)
	}
	var notes []string
	for _, r := range recs {
		notes = append(notes, r.Note)
	}
	if diff := cmp.Diff(notes, []string{"1", "4", "7"}); diff != "" {
		t.Errorf("good records (-got +want):\n%s", diff)
	}
}

func TestReadAuditMissingLogWrapsErrNotExist(t *testing.T) {
	_, err := ReadAudit(filepath.Join(t.TempDir(), "none.jsonl"), Filter{})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("error = %v, want fs.ErrNotExist", err)
	}
}

func TestReadAuditRefusesSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.jsonl")
	mustWrite(t, target, `{"session":"forged"}`+"\n", 0o600)
	path := filepath.Join(dir, "audit.jsonl")
	mustSymlink(t, target, path)
	if _, err := ReadAudit(path, Filter{}); err == nil || !strings.Contains(err.Error(), "is a symlink") {
		t.Errorf("error = %v, want a symlink refusal", err)
	}
}

func mustWrite(t *testing.T, path, data string, perm fs.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), perm); err != nil {
		t.Fatal(err)
	}
	// WriteFile's mode passes through the umask.
	if err := os.Chmod(path, perm); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// chownOrSkip gives path to another user, which only root can do.
func chownOrSkip(t *testing.T, path string) {
	t.Helper()
	if os.Geteuid() != 0 {
		testenv.Missing(t, "not root: giving a file to another user needs root")
	}
	if err := os.Lchown(path, 65534, 65534); err != nil {
		testenv.Missing(t, "no chown to nobody: %v", err)
	}
}

func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
