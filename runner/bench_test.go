//go:build linux

package runner

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/guardrun/guardrun/bwrap"
	"github.com/guardrun/guardrun/sandbox"
	"github.com/guardrun/guardrun/seccomp"
)

// BenchmarkTrue times /bin/true through Run against the same bwrap argv
// run by hand with a prebuilt filter, alternating the two in one loop so
// that both see the same machine state. It reports each as a metric and
// their ratio (Run / by hand); the target is at most 1.10.
func BenchmarkTrue(b *testing.B) {
	requireSandbox(b)
	ws := b.TempDir()
	p, err := sandbox.Derive(sandbox.Spec{
		Zones:      []sandbox.Zone{{Name: "ws", Root: ws, Writable: true}},
		SystemRead: sandbox.DefaultSystemPaths,
		DenyNames:  []string{".env"},
		Cwd:        ws,
		Home:       ws,
	})
	if err != nil {
		b.Fatal(err)
	}
	env := []string{"PATH=/usr/bin:/bin"}

	// By hand: the argv Run would use, the BPF program in a memfd built
	// once and rewound before each run, /dev/null for the status fd.
	args, err := bwrap.Args(p, bwrap.Options{SeccompFD: 3, StatusFD: 4})
	if err != nil {
		b.Fatal(err)
	}
	f, err := seccomp.Build(p.Seccomp)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Release()
	prog, err := f.BPF()
	if err != nil {
		b.Fatal(err)
	}
	mfd, err := unix.MemfdCreate("bench-seccomp", unix.MFD_CLOEXEC)
	if err != nil {
		b.Fatal(err)
	}
	memfd := os.NewFile(uintptr(mfd), "bench-seccomp")
	defer memfd.Close()
	if _, err := memfd.Write(prog); err != nil {
		b.Fatal(err)
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer devnull.Close()
	bin, err := exec.LookPath("bwrap")
	if err != nil {
		b.Fatal(err)
	}
	byHand := func() {
		if _, err := memfd.Seek(0, 0); err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command(bin, append(append(args, "--"), "/bin/true")...)
		cmd.Env = env
		cmd.ExtraFiles = []*os.File{memfd, devnull}
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
	}
	viaRun := func() {
		st, err := Run(context.Background(), p, []string{"/bin/true"}, env, Stdio{})
		if err != nil || st != 0 {
			b.Fatalf("Run: %d, %v", st, err)
		}
	}
	// Warm both paths (filter cache, page cache) outside the timing.
	viaRun()
	byHand()

	var tRun, tHand time.Duration
	b.ResetTimer()
	for i := range b.N {
		// Alternate which goes first, so neither always runs warm.
		if i%2 == 0 {
			t0 := time.Now()
			viaRun()
			t1 := time.Now()
			byHand()
			tRun += t1.Sub(t0)
			tHand += time.Since(t1)
		} else {
			t0 := time.Now()
			byHand()
			t1 := time.Now()
			viaRun()
			tHand += t1.Sub(t0)
			tRun += time.Since(t1)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(tRun.Nanoseconds())/float64(b.N), "run-ns/op")
	b.ReportMetric(float64(tHand.Nanoseconds())/float64(b.N), "hand-ns/op")
	b.ReportMetric(float64(tRun)/float64(tHand), "ratio")
}
