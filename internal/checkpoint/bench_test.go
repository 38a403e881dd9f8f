//go:build linux || darwin

package checkpoint

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// benchRepo is a git repository of files files (100 directories), all
// committed, with an index git has refreshed since the last write (so
// neither side pays for racily clean entries).
func benchRepo(b *testing.B, files int) string {
	b.Helper()
	root := filepath.Join(b.TempDir(), "repo")
	for i := range files {
		p := filepath.Join(root, fmt.Sprintf("d%02d", i%100), fmt.Sprintf("f%05d.txt", i))
		if i < 100 {
			os.MkdirAll(filepath.Dir(p), 0o755)
		}
		if err := os.WriteFile(p, fmt.Appendf(nil, "file %d\n%s", i, make([]byte, 200)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(root, ".gitignore"), []byte("*.o\n"), 0o644)
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
			"GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@b", "GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@b")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", "-A")
	git("commit", "-qm", "files")
	time.Sleep(1100 * time.Millisecond)
	git("status", "--porcelain")
	return root
}

// cpuTime is the CPU time of this process and of the children it
// waited for.
func cpuTime() time.Duration {
	var self, children syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(children.Utime) + tv(children.Stime)
}

// BenchmarkCheckpoint times, alternating within one loop, a checkpoint
// of a 10,000-file repository and `git status --porcelain` of it:
// unchanged, and with 10 files changed before each. The targets are a
// ratio (checkpoint/status) of at most 1.5 unchanged and 2 with 10
// files changed, in wall time; the CPU time ratio (this process's and
// the git processes') is reported beside it, and moves less on a
// shared machine.
//
//	go test -run '^$' -bench Checkpoint -benchtime 30x ./internal/checkpoint
func BenchmarkCheckpoint(b *testing.B) {
	if _, err := findGit(); err != nil {
		b.Skip(err)
	}
	// One repository for both, made once: the framework runs each
	// sub-benchmark more than once, and 10,000 files take a while.
	root := benchRepo(b, 10_000)
	for _, changed := range []int{0, 10} {
		b.Run(fmt.Sprintf("changed=%d", changed), func(b *testing.B) {
			s, err := Open(filepath.Join(b.TempDir(), "checkpoints"), testLimits())
			if err != nil {
				b.Fatal(err)
			}
			zones := []Zone{{Name: "w", Root: root}}
			if _, err := s.Take(context.Background(), zones, Request{}); err != nil {
				b.Fatal(err)
			}
			round := 0
			touch := func() {
				round++
				for i := range changed {
					p := filepath.Join(root, fmt.Sprintf("d%02d", i%100), fmt.Sprintf("f%05d.txt", i))
					os.WriteFile(p, fmt.Appendf(nil, "round %d\n", round), 0o644)
				}
			}
			status := func() {
				cmd := exec.Command("git", "status", "--porcelain")
				cmd.Dir = root
				cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("git status: %v\n%s", err, out)
				}
			}
			checkpoint := func() {
				if _, err := s.Take(context.Background(), zones, Request{}); err != nil {
					b.Fatal(err)
				}
			}
			var spentCP, spentStatus, cpuCP, cpuStatus time.Duration
			timed := func(f func(), spent, cpu *time.Duration) {
				touch()
				c0 := cpuTime()
				t0 := time.Now()
				f()
				*spent += time.Since(t0)
				*cpu += cpuTime() - c0
			}
			b.ResetTimer()
			for i := range b.N {
				if i%2 == 0 {
					timed(checkpoint, &spentCP, &cpuCP)
					timed(status, &spentStatus, &cpuStatus)
				} else {
					timed(status, &spentStatus, &cpuStatus)
					timed(checkpoint, &spentCP, &cpuCP)
				}
			}
			b.StopTimer()
			ms := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 / float64(b.N) }
			b.ReportMetric(ms(spentCP), "ms/checkpoint")
			b.ReportMetric(ms(spentStatus), "ms/status")
			b.ReportMetric(ms(spentCP)/ms(spentStatus), "checkpoint/status")
			b.ReportMetric(float64(cpuCP)/float64(cpuStatus), "cpu:checkpoint/status")
			b.ReportMetric(0, "ns/op")
		})
	}
}
