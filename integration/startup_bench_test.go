//go:build linux

package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/guardrun/guardrun/sandbox"
	"github.com/guardrun/guardrun/seccomp"
)

// The start-up benchmarks compare guardrun with what it cannot be faster
// than, in the same run, alternating, and report ratios: the machine's
// load changes absolute times from one run to the next, not ratios.
//
//	make bench    (or: go test -run '^$' -bench 'Startup|Make|RunOverhead' -benchtime 20x ./integration)

// staticFlags are the Makefile's build flags on Linux.
var staticFlags = []string{"-tags", "osusergo,netgo", "-ldflags", "-linkmode external -extldflags -static"}

var benchBins struct {
	once            sync.Once
	guardrun, hello string
	static          bool
	err             error
}

const helloCgo = `package main

// int one(void) { return 1; }
import "C"

import "os"

func main() {
	_ = C.one()
	os.Stdout.WriteString("hello\n")
}
`

// benchBinaries builds guardrun as make build does (static when the
// static libraries are there) and a hello-world Go binary the same way:
// with cgo, and with the same link mode.
func benchBinaries(b *testing.B) (guardrun, hello string, static bool) {
	b.Helper()
	benchBins.once.Do(func() {
		// Inside TestMain's directory, which it removes at the end.
		dir, err := os.MkdirTemp(filepath.Dir(guardrunBin), "bench-")
		if err != nil {
			benchBins.err = err
			return
		}
		os.Chmod(dir, 0o755)
		hdir := filepath.Join(dir, "hello")
		os.Mkdir(hdir, 0o755)
		os.WriteFile(filepath.Join(hdir, "go.mod"), []byte("module hello\n\ngo 1.21\n"), 0o644)
		os.WriteFile(filepath.Join(hdir, "main.go"), []byte(helloCgo), 0o644)
		build := func(static bool) error {
			var flags []string
			if static {
				flags = staticFlags
			}
			g := exec.Command("go", append(append([]string{"build"}, flags...), "-o", filepath.Join(dir, "guardrun"), "github.com/guardrun/guardrun/cmd/guardrun")...)
			if out, err := g.CombinedOutput(); err != nil {
				return fmt.Errorf("building guardrun: %v\n%s", err, out)
			}
			h := exec.Command("go", append(append([]string{"build"}, flags...), "-o", filepath.Join(dir, "hello-bin"), ".")...)
			h.Dir = hdir
			h.Env = append(os.Environ(), "GOWORK=off", "CGO_ENABLED=1")
			if out, err := h.CombinedOutput(); err != nil {
				return fmt.Errorf("building hello: %v\n%s", err, out)
			}
			return nil
		}
		benchBins.static = true
		if err := build(true); err != nil {
			// No static libc or libseccomp here: compare dynamic with
			// dynamic.
			benchBins.static = false
			benchBins.err = build(false)
		}
		benchBins.guardrun = filepath.Join(dir, "guardrun")
		benchBins.hello = filepath.Join(dir, "hello-bin")
	})
	if benchBins.err != nil {
		b.Fatal(benchBins.err)
	}
	return benchBins.guardrun, benchBins.hello, benchBins.static
}

// cost is what one step took: wall time, and the CPU time (user and
// system) of the process it ran with every descendant it waited for. On
// a machine others load, the CPU time moves much less than the wall
// time.
type cost struct{ wall, cpu time.Duration }

// cpuOf is the CPU time of a finished command and its waited-for
// descendants.
func cpuOf(c *exec.Cmd) time.Duration {
	if c.ProcessState == nil {
		return 0
	}
	return c.ProcessState.UserTime() + c.ProcessState.SystemTime()
}

// alternate runs the steps in rotating order b.N times and returns the
// mean cost of each. A step returns the CPU time it used.
func alternate(b *testing.B, steps ...func() time.Duration) []cost {
	for _, s := range steps {
		s() // warm the page cache
	}
	spent := make([]cost, len(steps))
	b.ResetTimer()
	for i := range b.N {
		for k := range steps {
			j := (i + k) % len(steps)
			t0 := time.Now()
			cpu := steps[j]()
			spent[j].wall += time.Since(t0)
			spent[j].cpu += cpu
		}
	}
	b.StopTimer()
	for j := range spent {
		spent[j].wall /= time.Duration(b.N)
		spent[j].cpu /= time.Duration(b.N)
	}
	return spent
}

// report reports each step's wall and CPU milliseconds and the ratios of
// the first step to the others.
func report(b *testing.B, names []string, t []cost) {
	for j, n := range names {
		b.ReportMetric(msOf(t[j].wall), "ms/"+n)
		b.ReportMetric(msOf(t[j].cpu), "cpu-ms/"+n)
		if j > 0 {
			b.ReportMetric(float64(t[0].wall)/float64(t[j].wall), names[0]+"/"+n)
			b.ReportMetric(float64(t[0].cpu)/float64(t[j].cpu), "cpu:"+names[0]+"/"+n)
		}
	}
	b.ReportMetric(0, "ns/op")
}

func msOf(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// BenchmarkStartupVersion: `guardrun version` against a hello-world Go
// binary built the same way. Target: version/hello ≤ 1.3.
func BenchmarkStartupVersion(b *testing.B) {
	gr, hello, static := benchBinaries(b)
	run := func(argv ...string) func() time.Duration {
		return func() time.Duration {
			c := exec.Command(argv[0], argv[1:]...)
			if err := c.Run(); err != nil {
				b.Fatalf("%q: %v", argv, err)
			}
			return cpuOf(c)
		}
	}
	steps, names := []func() time.Duration{run(gr, "version"), run(hello), run("/bin/true")}, []string{"version", "hello", "true"}
	if base := benchBase(); base != "" {
		steps, names = append(steps, run(base, "version")), append(names, "base")
	}
	t := alternate(b, steps...)
	report(b, names, t)
	if static {
		b.ReportMetric(1, "static")
	} else {
		b.ReportMetric(0, "static")
	}
}

// BenchmarkMakeRecipes: make -j2 on 200 one-line recipes with
// SHELL=guardrun, against the same make with SHELL set to a hand-written
// wrapper that starts the same bwrap sandbox with the same seccomp filter,
// and against plain make; and the guardrun make run under `guardrun
// serve`. Target: guardrun/wrapper ≤ 1.3 (served/wrapper).
func BenchmarkMakeRecipes(b *testing.B) {
	requireSandbox(b)
	if _, err := exec.LookPath("make"); err != nil {
		b.Skip("needs make")
	}
	gr, _, _ := benchBinaries(b)
	w := runWorld(b, runConfig, "GUARDRUN_SESSION=bench")

	var mk strings.Builder
	mk.WriteString("all:")
	for i := range 200 {
		fmt.Fprintf(&mk, " t%d", i)
	}
	mk.WriteString("\n.PHONY: all")
	for i := range 200 {
		fmt.Fprintf(&mk, " t%d", i)
	}
	mk.WriteString("\n")
	for i := range 200 {
		fmt.Fprintf(&mk, "t%d:\n\t@true t%d\n", i, i)
	}
	if err := os.WriteFile(filepath.Join(w.work, "Makefile"), []byte(mk.String()), 0o644); err != nil {
		b.Fatal(err)
	}

	// The wrapper: bwrap with guardrun's argv for this directory and
	// the filter on fd 3, running bash -c RECIPE.
	cmd := exec.Command(gr, "profile", "--json")
	cmd.Dir, cmd.Env = w.work, w.env
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("guardrun profile --json: %v", err)
	}
	bwrapArgv := profileBwrap(b, out)
	filter, err := seccomp.Build(sandbox.SeccompPolicy{})
	if err != nil {
		b.Fatal(err)
	}
	defer filter.Release()
	ff, err := filter.File()
	if err != nil {
		b.Fatal(err)
	}
	bpf := filepath.Join(w.tmp, "filter.bpf")
	data, err := os.ReadFile("/proc/self/fd/" + fmt.Sprint(ff.Fd()))
	ff.Close()
	if err != nil || len(data) == 0 {
		b.Fatalf("reading the filter: %v", err)
	}
	if err := os.WriteFile(bpf, data, 0o600); err != nil {
		b.Fatal(err)
	}
	bwrapBin, err := exec.LookPath("bwrap")
	if err != nil {
		b.Fatal(err)
	}
	var quoted []string
	for _, a := range bwrapArgv {
		quoted = append(quoted, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	wrapper := filepath.Join(w.tmp, "sandbox-sh")
	script := "#!/bin/sh\nexec 3<" + bpf + " 4>/dev/null\nexec " + bwrapBin + " " + strings.Join(quoted, " ") + " -- /bin/bash \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		b.Fatal(err)
	}

	mkRun := func(shell string) func() time.Duration {
		return func() time.Duration {
			c := exec.Command("make", "-s", "-j2", "SHELL="+shell)
			c.Dir, c.Env = w.work, w.env
			c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			if out, err := c.CombinedOutput(); err != nil {
				b.Fatalf("make SHELL=%s: %v\n%s", shell, err, out)
			}
			return cpuOf(c)
		}
	}
	// The same make under guardrun serve (started anew each time, as a
	// person would run it).
	served := func() time.Duration {
		c := exec.Command(gr, "serve", "--", "make", "-s", "-j2", "SHELL="+gr)
		c.Dir, c.Env = w.work, w.env
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if out, err := c.CombinedOutput(); err != nil {
			b.Fatalf("guardrun serve -- make: %v\n%s", err, out)
		}
		return cpuOf(c)
	}
	steps, names := []func() time.Duration{mkRun(gr), mkRun(wrapper), mkRun("/bin/sh"), served}, []string{"guardrun", "wrapper", "plain", "served"}
	if base := benchBase(); base != "" {
		steps, names = append(steps, mkRun(base)), append(names, "base")
	}
	t := alternate(b, steps...)
	report(b, names, t)
	b.ReportMetric(float64(t[3].wall)/float64(t[1].wall), "served/wrapper")
	b.ReportMetric(float64(t[3].cpu)/float64(t[1].cpu), "cpu:served/wrapper")
}

// benchBase is GUARDRUN_BENCH_BASE: another guardrun binary (an older
// build) that the start-up benchmarks add as a candidate, so that new and
// old are compared in the same run ("guardrun/base", "version/base").
func benchBase() string { return os.Getenv("GUARDRUN_BENCH_BASE") }
