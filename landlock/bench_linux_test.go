package landlock

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/guardrun/guardrun/sandbox"
)

// TestMain doubles as the re-exec helper BenchmarkStart compares against:
// with GUARDRUN_LANDLOCK_BENCH_HELPER set, this binary restricts its own
// thread with the ruleset and filter it is handed and execs the command,
// which is how a helper process would do it.
func TestMain(m *testing.M) {
	if os.Getenv("GUARDRUN_LANDLOCK_BENCH_HELPER") != "" {
		os.Exit(helperMain())
	}
	os.Exit(m.Run())
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
	if _, err := restrictThread(&rs, filter, false); err != nil {
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
// plain fork+exec as the floor. Each is reported as a metric
// (ms/locked-thread, ms/helper, ms/plain-exec).
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
	lockedThread := func() {
		c, err := Command(context.Background(), p, []string{"/bin/true"}, env, accept, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		if st, err := c.Wait(); err != nil || st != 0 {
			b.Fatalf("status %d, %v", st, err)
		}
	}
	abi, _ := ABI()
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	filter, _, err := filterProgram(p.Seccomp, nil)
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
	helper()
	plain()
	var tl, th, tp time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		lockedThread()
		t1 := time.Now()
		helper()
		t2 := time.Now()
		plain()
		t3 := time.Now()
		tl += t1.Sub(t0)
		th += t2.Sub(t1)
		tp += t3.Sub(t2)
	}
	n := float64(b.N)
	b.ReportMetric(float64(tl.Microseconds())/1000/n, "ms/locked-thread")
	b.ReportMetric(float64(th.Microseconds())/1000/n, "ms/helper")
	b.ReportMetric(float64(tp.Microseconds())/1000/n, "ms/plain-exec")
}
