package landlock

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guardrun/guardrun/sandbox"
	"github.com/guardrun/guardrun/seccomp/notify"
)

// TestMain doubles as the re-exec helper BenchmarkStart compares against:
// with GUARDRUN_LANDLOCK_BENCH_HELPER set, this binary restricts its own
// thread with the ruleset and filter it is handed and execs the command,
// which is how a helper process would do it.
func TestMain(m *testing.M) {
	if os.Getenv("GUARDRUN_LANDLOCK_BENCH_HELPER") != "" {
		os.Exit(helperMain())
	}
	if n := os.Getenv("GUARDRUN_LANDLOCK_CHMOD_LOOP"); n != "" {
		os.Exit(chmodLoop(n, os.Getenv("GUARDRUN_LANDLOCK_CHMOD_FILE")))
	}
	os.Exit(testMain(m))
}

// testState is the state directory the tests' commands share
// (Config.StateDir).
var testState string

// testMain runs the tests with a state directory of their own
// (testState), or the one GUARDRUN_LANDLOCK_TEST_STATE names (a helper
// process sharing its parent's).
func testMain(m *testing.M) int {
	if d := os.Getenv("GUARDRUN_LANDLOCK_TEST_STATE"); d != "" {
		testState = d
		return m.Run()
	}
	d, err := os.MkdirTemp("/var/tmp", "guardrun-landlock-state-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "landlock test:", err)
		return 2
	}
	defer removeTree(d)
	testState = d
	return m.Run()
}

func helperMain() int {
	runtime.LockOSThread()
	var rs Ruleset
	if err := json.Unmarshal([]byte(os.Getenv("GUARDRUN_LANDLOCK_BENCH_RULESET")), &rs); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 125
	}
	filter, err := base64.StdEncoding.DecodeString(os.Getenv("GUARDRUN_LANDLOCK_BENCH_FILTER"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 125
	}
	if _, err := restrictThread(&rs, filter, false, nil); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 125
	}
	args := os.Args[1:]
	err = syscall.Exec(args[0], args, []string{"PATH=/usr/bin:/bin"})
	fmt.Fprintln(os.Stderr, "helper: exec:", err)
	return 127
}

// BenchmarkStart compares the two ways to apply Landlock to the command
// alone, alternating in one loop so both see the same machine: the
// locked thread (restrict a thread guardrun never reuses, fork the
// command from it: what Command/Start do) against a re-exec helper (start
// a helper process that restricts itself and execs the command), with a
// plain fork+exec as the floor; and the locked thread without the
// calls guardrun serves (no listener: ms/locked-thread-unserved), which
// is what serving the metadata calls costs a command that makes none;
// and the locked thread with the command in the thread's own domain
// (ms/locked-thread-not-nested: no trampoline exec), whose difference
// to ms/locked-thread is ms/nesting. Each is reported as a metric
// (ms/locked-thread, ms/helper, ms/plain-exec, served/unserved).
func BenchmarkStart(b *testing.B) {
	if err := Check(); err != nil {
		b.Skip(err)
	}
	ws := b.TempDir()
	p, err := sandbox.Derive(sandbox.Spec{
		Zones:      []sandbox.Zone{{Name: "ws", Root: ws, Writable: true}},
		SystemRead: sandbox.DefaultSystemPaths,
		Cwd:        ws,
		Home:       ws,
	})
	if err != nil {
		b.Fatal(err)
	}
	env := []string{"PATH=/usr/bin:/bin"}
	accept := []string{AcceptDenyCreate}
	lockedThreadWith := func(served bool) {
		c, err := Command(context.Background(), p, []string{"/bin/true"}, env, Config{Accept: accept, StateDir: testState})
		if err != nil {
			b.Fatal(err)
		}
		if !served {
			// No calls served by guardrun: no listener, the filter
			// without notification rules (the path before metadata
			// was served).
			c.Notify = notify.NewRegistry()
		}
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		if st, err := c.Wait(); err != nil || st != 0 {
			b.Fatalf("status %d, %v", st, err)
		}
	}
	lockedThread := func() { lockedThreadWith(true) }
	unserved := func() { lockedThreadWith(false) }
	direct := func() {
		// The command in the thread's own domain, not nested (before
		// the trampoline).
		startDirect = true
		defer func() { startDirect = false }()
		lockedThreadWith(true)
	}
	abi, _ := ABI()
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	filter, _, err := filterProgram(p.Seccomp, nil, "")
	if err != nil {
		b.Fatal(err)
	}
	helper := func() {
		// The same preparation as Command (temporary directory, ruleset),
		// then the helper process does the rest.
		tmp, err := os.MkdirTemp("", "guardrun-tmp-")
		if err != nil {
			b.Fatal(err)
		}
		defer os.RemoveAll(tmp)
		rs, err := Build(p, Options{ABI: abi, TmpDir: tmp, Accept: accept})
		if err != nil {
			b.Fatal(err)
		}
		js, _ := json.Marshal(rs)
		cmd := exec.Command(self, "/bin/true")
		cmd.Env = []string{"GUARDRUN_LANDLOCK_BENCH_HELPER=1",
			"GUARDRUN_LANDLOCK_BENCH_RULESET=" + string(js),
			"GUARDRUN_LANDLOCK_BENCH_FILTER=" + base64.StdEncoding.EncodeToString(filter)}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("helper: %v\n%s", err, out)
		}
	}
	plain := func() {
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
	}
	lockedThread()
	unserved()
	helper()
	plain()
	direct()
	steps := []func(){lockedThread, unserved, helper, plain, direct}
	spent := make([]time.Duration, len(steps))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// Rotate the order, so that none always runs first.
		for k := range steps {
			j := (i + k) % len(steps)
			t0 := time.Now()
			steps[j]()
			spent[j] += time.Since(t0)
		}
	}
	n := float64(b.N)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / n }
	b.ReportMetric(ms(spent[0]), "ms/locked-thread")
	b.ReportMetric(ms(spent[1]), "ms/locked-thread-unserved")
	b.ReportMetric(ms(spent[2]), "ms/helper")
	b.ReportMetric(ms(spent[3]), "ms/plain-exec")
	b.ReportMetric(ms(spent[4]), "ms/locked-thread-not-nested")
	b.ReportMetric(float64(spent[0])/float64(spent[1]), "served/unserved")
	b.ReportMetric(float64(spent[0]-spent[4])/n/1e6, "ms/nesting")
}

// chmodLoop is the command BenchmarkMetadataChmod runs in the sandbox:
// n chmods of file, alternating two modes; it prints the time per call
// in nanoseconds.
func chmodLoop(n, file string) int {
	count, err := strconv.Atoi(n)
	if err != nil || count <= 0 || file == "" {
		fmt.Fprintln(os.Stderr, "chmod loop: bad arguments")
		return 2
	}
	t0 := time.Now()
	for i := range count {
		if err := syscall.Chmod(file, 0o644|uint32(i&1)<<6); err != nil {
			fmt.Fprintln(os.Stderr, "chmod loop:", err)
			return 1
		}
	}
	fmt.Println(time.Since(t0).Nanoseconds() / int64(count))
	return 0
}

// BenchmarkMetadataChmod times a chmod of a file in the writable zone
// made by a command under landlock, through guardrun's notification
// handler (what Command sets up) against the same command with the
// metadata calls left to the kernel (an empty notification registry:
// the landlock path before metadata was served), alternating in one
// loop. Each run makes 2000 calls; the metrics are nanoseconds per call
// and their ratio.
func BenchmarkMetadataChmod(b *testing.B) {
	if err := Check(); err != nil {
		b.Skip(err)
	}
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	ws := b.TempDir()
	p, err := sandbox.Derive(sandbox.Spec{
		Zones:      []sandbox.Zone{{Name: "ws", Root: ws, Writable: true}, {Name: "bin", Root: filepath.Dir(self)}},
		SystemRead: sandbox.DefaultSystemPaths,
		Cwd:        ws,
		Home:       ws,
	})
	if err != nil {
		b.Fatal(err)
	}
	file := filepath.Join(p.Cwd, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		b.Fatal(err)
	}
	env := []string{"PATH=/usr/bin:/bin", "GUARDRUN_LANDLOCK_CHMOD_LOOP=2000", "GUARDRUN_LANDLOCK_CHMOD_FILE=" + file}
	loop := func(served bool) float64 {
		c, err := Command(context.Background(), p, []string{self}, env, Config{Accept: []string{AcceptDenyCreate}, StateDir: testState})
		if err != nil {
			b.Fatal(err)
		}
		if !served {
			c.Notify = notify.NewRegistry()
		}
		var out bytes.Buffer
		c.Cmd.Stdout, c.Cmd.Stderr = &out, &out
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		if st, err := c.Wait(); err != nil || st != 0 {
			b.Fatalf("status %d, %v\n%s", st, err, out.String())
		}
		ns, err := strconv.ParseFloat(strings.TrimSpace(out.String()), 64)
		if err != nil {
			b.Fatalf("chmod loop said %q", out.String())
		}
		return ns
	}
	loop(true)
	loop(false)
	var served, direct float64
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			served += loop(true)
			direct += loop(false)
		} else {
			direct += loop(false)
			served += loop(true)
		}
	}
	n := float64(b.N)
	b.ReportMetric(served/n, "ns/chmod-served")
	b.ReportMetric(direct/n, "ns/chmod-direct")
	b.ReportMetric(served/direct, "served/direct")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkStartWatched: what sharing the protected names' snapshots
// with other guardrun processes (share_linux.go) adds to a command, for
// a repository as git init leaves it (config, 13 sample hooks) and the
// default protected names (sandbox.DefaultProtect, most of them
// missing): /bin/true under landlock, shared (the lock file of each
// watched path taken and the snapshot stored, then released) against
// the same run with the snapshots taken by this process alone, as
// before, alternating in one loop. Metrics: ms per command each way,
// their ratio, and the microseconds sharing adds.
func BenchmarkStartWatched(b *testing.B) {
	if err := Check(); err != nil {
		b.Skip(err)
	}
	ws, err := os.MkdirTemp("/var/tmp", "guardrun-bench-watched-")
	if err != nil {
		b.Fatal(err)
	}
	defer removeTree(ws)
	p := gitInitProfile(b, ws)
	watched := 0
	one := func(shared bool) {
		shareOff = !shared
		defer func() { shareOff = false }()
		c, err := Command(context.Background(), p, []string{"/bin/true"}, []string{"PATH=/usr/bin:/bin"}, Config{Accept: []string{AcceptDenyCreate}, StateDir: testState})
		if err != nil {
			b.Fatal(err)
		}
		watched = len(c.Ruleset.Watch)
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		if st, err := c.Wait(); err != nil || st != 0 || len(c.Restored) != 0 {
			b.Fatalf("status %d, %v, %q", st, err, c.Restored)
		}
	}
	one(true)
	one(false)
	with, without := alternate(b, one)
	n := float64(b.N)
	b.ReportMetric(float64(with.Microseconds())/1000/n, "ms/shared")
	b.ReportMetric(float64(without.Microseconds())/1000/n, "ms/unshared")
	b.ReportMetric(float64(with)/float64(without), "shared/unshared")
	b.ReportMetric(float64((with-without).Microseconds())/n, "us/added")
	b.ReportMetric(float64(watched), "watched")
}

// gitInitProfile fills ws as git init leaves a repository (config, 13
// sample hooks) and returns the profile of a command working in it,
// with the default protected names.
func gitInitProfile(b *testing.B, ws string) *sandbox.Profile {
	b.Helper()
	if err := os.MkdirAll(filepath.Join(ws, ".git/hooks"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".git/config"), []byte("[core]\n\trepositoryformatversion = 0\n\tbare = false\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	for i := range 13 {
		p := filepath.Join(ws, ".git/hooks", fmt.Sprintf("hook%02d.sample", i))
		if err := os.WriteFile(p, bytes.Repeat([]byte("#!/bin/sh\n# a sample hook\n"), 60), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	p, err := sandbox.Derive(sandbox.Spec{
		Zones:        []sandbox.Zone{{Name: "ws", Root: ws, Writable: true}},
		SystemRead:   sandbox.DefaultSystemPaths,
		Cwd:          ws,
		Home:         ws,
		ProtectNames: sandbox.DefaultProtect,
	})
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// alternate runs one(true) and one(false) b.N times each, taking turns
// so that both see the same machine, and returns the time each way
// took in all.
func alternate(b *testing.B, one func(shared bool)) (with, without time.Duration) {
	b.ResetTimer()
	for i := range b.N {
		for k := range 2 {
			shared := (i+k)%2 == 0
			t0 := time.Now()
			one(shared)
			if shared {
				with += time.Since(t0)
			} else {
				without += time.Since(t0)
			}
		}
	}
	return with, without
}

// BenchmarkShareSnapshot is BenchmarkStartWatched's difference alone,
// without the command's noise: the snapshots of the same 23 watched
// paths taken (takeHeld), compared after (restore) and released,
// shared with other processes against taken by this process alone,
// alternating in one loop. Metrics: microseconds each way, their
// ratio, and the microseconds sharing adds.
func BenchmarkShareSnapshot(b *testing.B) {
	ws := b.TempDir()
	p := gitInitProfile(b, ws)
	rs, err := Build(p, Options{ABI: 7, Accept: []string{AcceptDenyCreate}})
	if err != nil {
		b.Fatal(err)
	}
	dir, err := shareDir(testState, p, rs)
	if err != nil {
		b.Fatal(err)
	}
	one := func(shared bool) {
		shareOff = !shared
		defer func() { shareOff = false }()
		snaps, release, err := takeHeld(dir, rs.Watch)
		if err != nil {
			b.Fatal(err)
		}
		if l := restore(snaps, time.Now()); len(l) != 0 {
			b.Fatal(l)
		}
		release()
	}
	one(true)
	with, without := alternate(b, one)
	n := float64(b.N)
	b.ReportMetric(float64(with.Nanoseconds())/1000/n, "us/shared")
	b.ReportMetric(float64(without.Nanoseconds())/1000/n, "us/unshared")
	b.ReportMetric(float64(with)/float64(without), "shared/unshared")
	b.ReportMetric(float64((with-without).Nanoseconds())/1000/n, "us/added")
	b.ReportMetric(float64(len(rs.Watch)), "watched")
}
