//go:build linux

package integration

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/guardrun/guardrun/sandbox"
	"github.com/guardrun/guardrun/seccomp"
)

// BenchmarkBackends times, alternating within one loop, `guardrun
// --approve-all -c true` with the landlock backend, the same with bwrap,
// plain `bash -c true`, the hand-written bwrap+seccomp call of
// BenchmarkRunOverhead, `guardrun explain -c true` (guardrun's own
// start, config and policy: the floor of every guardrun run), and both
// runs served by `guardrun serve`.
// landlock/bare is the landlock path against the hand-written bwrap
// call; the target is ≤ 0.7. guardrun is built as make build does
// (static where it can be, as BenchmarkRunOverhead builds it): the
// dynamic loader of the development build costs the client and the
// landlock trampoline a few milliseconds that users do not pay.
//
//	go test -run '^$' -bench Backends -benchtime 100x ./integration
func BenchmarkBackends(b *testing.B) {
	requireSandbox(b)
	w := runWorld(b, runConfig+landlockAccept, "GUARDRUN_SESSION=bench")
	landlockWorks(b, w, w.work)
	gr, _, static := benchBinaries(b)
	if !static {
		b.Log("guardrun built with dynamic linking: no static libc or libseccomp here")
	}
	run := func(c *exec.Cmd) {
		c.Dir, c.Env = w.work, w.env
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if out, err := c.CombinedOutput(); err != nil {
			b.Fatalf("%q: %v\n%s", c.Args, err, out)
		}
	}
	bare := bareBwrap(b, gr, w, run)
	srv := startBenchServer(b, gr, w)
	servedBy := func(gr string, srv *benchServer, backend string) {
		c := exec.Command(gr, "--backend", backend, "--approve-all", "-c", "true")
		c.Dir, c.Env = w.work, srv.env(w)
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if out, err := c.CombinedOutput(); err != nil {
			b.Fatalf("served %s: %v\n%s", backend, err, out)
		}
	}
	served := func(backend string) { servedBy(gr, srv, backend) }
	steps := []func(){
		func() { run(exec.Command(gr, "--backend", "landlock", "--approve-all", "-c", "true")) },
		func() { run(exec.Command(gr, "--backend", "bwrap", "--approve-all", "-c", "true")) },
		func() { run(exec.Command("bash", "-c", "true")) },
		bare,
		// guardrun's own floor: the same config and policy, no sandbox,
		// nothing run.
		func() { run(exec.Command(gr, "explain", "-c", "true")) },
		// Both paths served by guardrun serve.
		func() { served("bwrap") },
		func() { served("landlock") },
	}
	base := benchBase()
	var bsrv *benchServer
	if base != "" {
		// The same, served by GUARDRUN_BENCH_BASE's own server.
		bsrv = startBenchServer(b, base, w)
		steps = append(steps, func() { servedBy(base, bsrv, "bwrap") }, func() { servedBy(base, bsrv, "landlock") })
	}
	for _, s := range steps {
		s() // warm up
	}
	spent := make([]time.Duration, len(steps))
	cpu0, bcpu0 := srv.cpu(), time.Duration(0)
	if bsrv != nil {
		bcpu0 = bsrv.cpu()
	}
	b.ResetTimer()
	for i := range b.N {
		for k := range steps {
			j := (i + k) % len(steps)
			t0 := time.Now()
			steps[j]()
			spent[j] += time.Since(t0)
		}
	}
	b.StopTimer()
	// The server's CPU (with the sandboxes it waited for) per served
	// request, both backends.
	scpu := float64((srv.cpu() - cpu0).Nanoseconds()) / 1e6 / float64(2*b.N)
	b.ReportMetric(scpu, "cpu-ms/served")
	ms := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 / float64(b.N) }
	ll, bw, sh, hand, floor := ms(spent[0]), ms(spent[1]), ms(spent[2]), ms(spent[3]), ms(spent[4])
	sbw, sll := ms(spent[5]), ms(spent[6])
	b.ReportMetric(ll, "ms/landlock")
	b.ReportMetric(bw, "ms/bwrap")
	b.ReportMetric(sh, "ms/bash")
	b.ReportMetric(hand, "ms/bare")
	b.ReportMetric(floor, "ms/explain")
	b.ReportMetric(ll/hand, "landlock/bare")
	b.ReportMetric(bw/hand, "bwrap/bare")
	b.ReportMetric(sbw, "ms/served-bwrap")
	b.ReportMetric(sll, "ms/served-landlock")
	b.ReportMetric(sbw/hand, "served-bwrap/bare")
	b.ReportMetric(sll/hand, "served-landlock/bare")
	b.ReportMetric(sbw/bw, "served-bwrap/bwrap")
	b.ReportMetric(sll/ll, "served-landlock/landlock")
	if base != "" {
		bbw, bll := ms(spent[7]), ms(spent[8])
		b.ReportMetric(bbw/hand, "base-served-bwrap/bare")
		b.ReportMetric(bll/hand, "base-served-landlock/bare")
		b.ReportMetric(sbw/bbw, "served-bwrap/base")
		b.ReportMetric(sll/bll, "served-landlock/base")
		bcpu := float64((bsrv.cpu() - bcpu0).Nanoseconds()) / 1e6 / float64(2*b.N)
		b.ReportMetric(bcpu, "cpu-ms/base-served")
		b.ReportMetric(scpu/bcpu, "cpu:served/base")
	}
	b.ReportMetric(0, "ns/op")
}

// bareBwrap returns the hand-written bwrap+seccomp call: the argv
// guardrun (binary gr) would use here, with a prebuilt filter, running
// bash -c true through run.
func bareBwrap(b *testing.B, gr string, w *world, run func(*exec.Cmd)) func() {
	cmd := exec.Command(gr, "--backend", "bwrap", "profile", "--json")
	cmd.Dir, cmd.Env = w.work, w.env
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("guardrun profile --json: %v", err)
	}
	bwrapBin, err := exec.LookPath("bwrap")
	if err != nil {
		b.Fatal(err)
	}
	filter, err := seccomp.Build(sandbox.SeccompPolicy{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(filter.Release)
	argv := append(append(profileBwrap(b, out), "--"), "/bin/bash", "-c", "true")
	return func() {
		bpf, err := filter.File()
		if err != nil {
			b.Fatal(err)
		}
		pr, pw, err := os.Pipe()
		if err != nil {
			b.Fatal(err)
		}
		drained := make(chan struct{})
		go func() {
			io.Copy(io.Discard, pr)
			pr.Close()
			close(drained)
		}()
		c := exec.Command(bwrapBin, argv...)
		c.ExtraFiles = []*os.File{bpf, pw}
		run(c)
		bpf.Close()
		pw.Close()
		<-drained
	}
}

// BenchmarkRunOverhead times, alternating within one loop, what a person
// waits for: `guardrun --approve-all -c true` (config, policy, audit and
// the sandbox), the bare sandbox entry (the same bwrap argv and seccomp
// filter, exec'd by hand), and plain `sh -c true`. overhead-ms is
// guardrun's cost above the sandbox it starts; the target is
// guardrun/bare ≤ 1.15, met only served (served/bare: the same run through
// `guardrun serve`). cpu-ms counts the CPU time of each with its
// descendants, steadier than wall time on a loaded machine.
//
//	go test -run '^$' -bench RunOverhead -benchtime 100x ./integration
func BenchmarkRunOverhead(b *testing.B) {
	requireSandbox(b)
	gr, _, _ := benchBinaries(b) // built as make build does
	w := runWorld(b, runConfig, "GUARDRUN_SESSION=bench")

	run := func(c *exec.Cmd) time.Duration {
		c.Dir, c.Env = w.work, w.env
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := c.Run(); err != nil {
			b.Fatalf("%q: %v", c.Args, err)
		}
		return cpuOf(c)
	}
	guardrun := func() time.Duration {
		return run(exec.Command(gr, "--approve-all", "-c", "true"))
	}
	var bareCPU time.Duration
	bareCall := bareBwrap(b, gr, w, func(c *exec.Cmd) { bareCPU = run(c) })
	bare := func() time.Duration {
		bareCall()
		return bareCPU
	}
	sh := func() time.Duration {
		return run(exec.Command("sh", "-c", "true"))
	}
	// Served: the client's CPU and the server's (with the sandbox it
	// waited for).
	srv := startBenchServer(b, gr, w)
	served := func() time.Duration {
		c := exec.Command(gr, "--approve-all", "-c", "true")
		c.Dir, c.Env = w.work, srv.env(w)
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		before := srv.cpu()
		if err := c.Run(); err != nil {
			b.Fatalf("served: %v", err)
		}
		return cpuOf(c) + srv.cpu() - before
	}

	// Rotated so none always runs first or last; warmed outside the
	// timing (page cache, filter).
	steps, names := []func() time.Duration{guardrun, bare, sh, served}, []string{"guardrun", "bare", "sh", "served"}
	if base := benchBase(); base != "" {
		steps = append(steps, func() time.Duration {
			return run(exec.Command(base, "--approve-all", "-c", "true"))
		})
		names = append(names, "base")
	}
	t := alternate(b, steps...)
	report(b, names, t)
	b.ReportMetric(msOf(t[0].wall-t[1].wall), "overhead-ms")
	b.ReportMetric(float64(t[3].wall)/float64(t[1].wall), "served/bare")
	b.ReportMetric(float64(t[3].cpu)/float64(t[1].cpu), "cpu:served/bare")
}

// profileBwrap is the bwrap argv of `guardrun profile --json` output.
func profileBwrap(b *testing.B, out []byte) []string {
	var prof struct {
		Bwrap []string `json:"bwrap"`
	}
	if err := json.Unmarshal(out, &prof); err != nil || len(prof.Bwrap) == 0 {
		b.Fatalf("guardrun profile --json has no bwrap argv (%v):\n%s", err, out)
	}
	return prof.Bwrap
}
