//go:build linux

package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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
		st, err := RunWith(context.Background(), Options{}, p, []string{"/bin/true"}, env, Stdio{})
		if err != nil || st != 0 {
			b.Fatalf("RunWith: %d, %v", st, err)
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

// buildTree makes a workspace for BenchmarkServedBuild in base: src/
// with files for the build to read, and, when secret is set, a .env at
// its top (which makes the landlock backend serve its entries).
func buildTree(b *testing.B, base string, secret bool) string {
	b.Helper()
	ws := filepath.Join(base, "ws")
	if err := os.MkdirAll(filepath.Join(ws, "src"), 0o755); err != nil {
		b.Fatal(err)
	}
	for i := range 1000 {
		body := strings.Repeat(fmt.Sprintf("#define H%d %d\n", i, i), 12)
		if err := os.WriteFile(filepath.Join(ws, "src", fmt.Sprintf("h%04d.h", i)), []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if secret {
		if err := os.WriteFile(filepath.Join(ws, ".env"), []byte(secretText), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	return ws
}

// BenchmarkServedBuild times a build that opens 100,000 files (1,000
// units reading 100 sources each, one object written per unit into a
// build directory it makes at the top of the workspace, the objects read
// back and removed) in one workspace, alternating in one loop: under
// landlock with a .env at the workspace's top (its entries served by
// guardrun: every create and remove goes through it), under landlock
// with the .env moved away (the kernel does everything, as before served
// directories), under bwrap with the .env, and without a sandbox. ratio
// is served over plain landlock; the target is at most 1.2. The
// "creates" case is the same with no sources read: 1,000 creates and
// removes alone, where the round trip of each served call shows
// (us-per-call: the difference per create and remove). As root it runs
// in a tmpfs mounted for it, so that the disk does not hide it: on the
// test machine's disk a create and a remove take 0.5 to 1 ms each.
func BenchmarkServedBuild(b *testing.B) {
	b.Run("build", func(b *testing.B) { servedBuild(b, "", 1000, 100) })
	b.Run("creates", func(b *testing.B) {
		dir := ""
		if os.Geteuid() == 0 {
			d, err := os.MkdirTemp(fixtureRoot(), "guardrun-bench-tmpfs-")
			if err != nil {
				b.Fatal(err)
			}
			defer os.Remove(d)
			if err := unix.Mount("tmpfs", d, "tmpfs", 0, "size=64m,mode=0755"); err == nil {
				defer unix.Unmount(d, unix.MNT_DETACH)
				dir = d
			}
		}
		servedBuild(b, dir, 1000, 0)
	})
}

func servedBuild(b *testing.B, in string, units, per int) {
	requireLandlock(b)
	bin := filepath.Join(suiteDir, "buildload")
	build := exec.Command("go", "build", "-o", bin, "./testdata/buildload")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("build buildload: %v\n%s", err, out)
	}
	base := b.TempDir()
	if in != "" {
		var err error
		if base, err = os.MkdirTemp(in, "guardrun-bench-"); err != nil {
			b.Fatal(err)
		}
		defer os.RemoveAll(base)
	}
	ws := buildTree(b, base, true)
	secret, away := filepath.Join(ws, ".env"), filepath.Join(base, "env-away")
	state := filepath.Join(base, "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		b.Fatal(err)
	}
	// One profile for both: the landlock backend looks at the tree when
	// each command starts (a .env there splits the top; a missing one
	// is moved aside after the command if it is created).
	p, err := sandbox.Derive(sandbox.Spec{
		Zones:      []sandbox.Zone{{Name: "ws", Root: ws, Writable: true}, {Name: "bin", Root: suiteDir}},
		SystemRead: sandbox.DefaultSystemPaths,
		DenyNames:  []string{".env"},
		Cwd:        ws,
		Home:       ws,
	})
	if err != nil {
		b.Fatal(err)
	}
	ll, err := New("linux", BackendLandlock, Config{StateDir: state})
	if err != nil {
		b.Fatal(err)
	}
	type run struct {
		name   string
		b      Backend
		secret bool
		t      time.Duration
	}
	runs := []run{{"landlock-served", ll, true, 0}, {"landlock-plain", ll, false, 0}}
	if testBackendNamed(BackendBwrap).Check() == nil {
		bw, _ := New("linux", BackendBwrap, Config{})
		runs = append(runs, run{"bwrap", bw, true, 0})
	}
	runs = append(runs, run{"unsandboxed", nil, true, 0})
	env := []string{"PATH=/usr/bin:/bin"}
	argv := []string{bin, "src", "build", strconv.Itoa(units), strconv.Itoa(per)}
	want := strconv.Itoa(units*per + 2*units)
	one := func(i int) {
		r := &runs[i]
		_, err := os.Lstat(secret)
		switch has := err == nil; {
		case has && !r.secret:
			err = os.Rename(secret, away)
		case !has && r.secret:
			err = os.Rename(away, secret)
		default:
			err = nil
		}
		if err != nil {
			b.Fatal(err)
		}
		var out bytes.Buffer
		stdio := Stdio{Stdout: &out, Stderr: &out}
		t0 := time.Now()
		var st int
		if r.b == nil {
			st, err = RunUnsandboxed(context.Background(), ws, argv, env, stdio)
		} else {
			st, err = RunWith(context.Background(), Options{Backend: r.b}, p, argv, env, stdio)
		}
		r.t += time.Since(t0)
		if err != nil || st != 0 || strings.TrimSpace(out.String()) != want {
			b.Fatalf("%s: status %d, %v\n%s", r.name, st, err, out.String())
		}
	}
	for i := range runs {
		one(i) // warm the page cache and the filter cache
		runs[i].t = 0
	}
	b.ResetTimer()
	for n := range b.N {
		for k := range runs {
			one((k + n) % len(runs)) // each goes first in turn
		}
	}
	b.StopTimer()
	for _, r := range runs {
		b.ReportMetric(float64(r.t.Milliseconds())/float64(b.N), "ms/"+r.name)
	}
	b.ReportMetric(float64(runs[0].t)/float64(runs[1].t), "ratio")
	b.ReportMetric(float64((runs[0].t-runs[1].t).Microseconds())/float64(b.N)/float64(2*units), "us-per-call")
}

// verifiedTree makes a workspace for BenchmarkVerified: a git repository
// with some history, and a tree of 10,000 Go files.
func verifiedTree(b *testing.B, base string) string {
	b.Helper()
	ws := filepath.Join(base, "ws")
	repo := filepath.Join(ws, "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		b.Fatal(err)
	}
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=b", "-c", "user.email=b@b", "-c", "commit.gpgsign=false"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	for i := range 200 {
		body := strings.Repeat(fmt.Sprintf("line %d of commit %d\n", i, i), 40)
		if err := os.WriteFile(filepath.Join(repo, fmt.Sprintf("f%d.txt", i%20)), []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
		git("add", "-A")
		git("commit", "-qm", fmt.Sprintf("commit %d", i))
	}
	for d := range 100 {
		dir := filepath.Join(ws, "src", fmt.Sprintf("p%02d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := range 100 {
			body := fmt.Sprintf("package p%02d\n\nfunc F%d() int { return %d }\n", d, f, f)
			if f%7 == 0 {
				body += "// x marks it\n"
			}
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.go", f)), []byte(body), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	return ws
}

// BenchmarkVerified times pre-approved read-only pipelines run verified
// (every exec and write routed to guardrun and checked against the
// prediction) against the same unverified, alternating in one loop,
// under each Linux backend that works here: `git log -p | grep x | head`
// (target at most 1.10) and `find . -name '*.go' | xargs grep -l x`
// over 10,000 files (target at most 1.15). "held" is one held call's
// round trip (the call routed, the callback asked and answering yes, the
// call made): 200 creates and removes of names the prediction does not
// allow, against as many it allows; us-per-held is the time of one held
// call with its share of the command, us-per-predicted that of one
// allowed, us-hold-extra what holding adds to a call.
func BenchmarkVerified(b *testing.B) {
	requireSandbox(b)
	for _, tool := range []string{"git", "grep", "find", "xargs", "head"} {
		if _, err := exec.LookPath(tool); err != nil {
			b.Skip(err)
		}
	}
	base := b.TempDir()
	ws := verifiedTree(b, base)
	state := filepath.Join(base, "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		b.Fatal(err)
	}
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
	var backends []Backend
	for _, name := range []string{BackendLandlock, BackendBwrap} {
		bk, err := New("linux", name, Config{StateDir: state})
		if err == nil && bk.Check() == nil {
			backends = append(backends, bk)
		}
	}
	any := []sandbox.Word{{Any: true, Many: true}}
	pipelines := []struct {
		name, script string
		exec         []sandbox.Exec
		out          string
	}{
		{"git-log", `git -C repo log -p | grep x | head`, []sandbox.Exec{
			{Program: "git", Args: []sandbox.Word{{Text: "-C"}, {Text: "repo"}, {Text: "log"}, {Text: "-p"}}},
			{Program: "grep", Args: []sandbox.Word{{Text: "x"}}},
			{Program: "head"}}, ""},
		{"find-xargs", `find . -name '*.go' | xargs grep -l x | wc -l`, []sandbox.Exec{
			{Program: "find", Args: []sandbox.Word{{Text: "."}, {Text: "-name"}, {Text: "*.go"}}},
			{Program: "xargs", Args: []sandbox.Word{{Text: "grep"}, {Text: "-l"}, {Text: "x"}}},
			{Program: "grep", Args: append([]sandbox.Word{{Text: "-l"}, {Text: "x"}}, any...)},
			{Program: "wc", Args: []sandbox.Word{{Text: "-l"}}}}, "1500\n"},
	}
	env := []string{"PATH=/usr/bin:/bin", "LC_ALL=C"}
	run := func(b *testing.B, bk Backend, script string, v *Verify, want string) time.Duration {
		var out bytes.Buffer
		t0 := time.Now()
		st, err := RunWith(context.Background(), Options{Backend: bk, Verify: v}, p, []string{"/bin/sh", "-c", script}, env, Stdio{Stdout: &out, Stderr: &out})
		d := time.Since(t0)
		if err != nil || st != 0 || want != "" && out.String() != want {
			b.Fatalf("%s %q: status %d, %v\n%s", bk.Name(), script, st, err, out.String())
		}
		if v != nil {
			if h, ok := v.Refused(); ok {
				b.Fatalf("%s %q: refused: %s", bk.Name(), script, h.Line(nil))
			}
		}
		return d
	}
	for _, bk := range backends {
		for _, pl := range pipelines {
			b.Run(bk.Name()+"/"+pl.name, func(b *testing.B) {
				pred := &sandbox.Prediction{Exec: append([]sandbox.Exec{{Program: "sh", Args: []sandbox.Word{{Text: "-c"}, {Text: pl.script}}}}, pl.exec...)}
				verified := func() time.Duration { return run(b, bk, pl.script, &Verify{Prediction: pred}, pl.out) }
				plain := func() time.Duration { return run(b, bk, pl.script, nil, pl.out) }
				verified()
				plain()
				var tv, tp time.Duration
				b.ResetTimer()
				for i := range b.N {
					if i%2 == 0 {
						tv += verified()
						tp += plain()
					} else {
						tp += plain()
						tv += verified()
					}
				}
				b.StopTimer()
				b.ReportMetric(float64(tv.Microseconds())/float64(b.N)/1000, "ms/verified")
				b.ReportMetric(float64(tp.Microseconds())/float64(b.N)/1000, "ms/unverified")
				b.ReportMetric(float64(tv)/float64(tp), "ratio")
			})
		}
		b.Run(bk.Name()+"/held", func(b *testing.B) {
			script := `i=0; while [ $i -lt 200 ]; do : > "$1$i"; i=$((i+1)); done; rm -f "$1"*`
			exec := []sandbox.Exec{{Program: "sh", Args: []sandbox.Word{{Text: "-c"}, {Text: script}, {Any: true}, {Any: true}}},
				{Program: "rm", Args: []sandbox.Word{{Text: "-f"}, {Any: true, Many: true}}}}
			// Only pred* is predicted: the held run's creates of held*
			// are held (and so is its rm's removal of them).
			pred := &sandbox.Prediction{Exec: exec, Write: []sandbox.PathPattern{{Path: filepath.Join(ws, "pred*"), Glob: true}}}
			yes := func(context.Context, sandbox.HeldCall) (bool, error) { return true, nil }
			one := func(pr *sandbox.Prediction, prefix string) (time.Duration, int) {
				v := &Verify{Prediction: pr, Hold: yes}
				var out bytes.Buffer
				t0 := time.Now()
				st, err := RunWith(context.Background(), Options{Backend: bk, Verify: v}, p, []string{"/bin/sh", "-c", script, "sh", prefix}, env, Stdio{Stdout: &out, Stderr: &out})
				d := time.Since(t0)
				if err != nil || st != 0 {
					b.Fatalf("status %d, %v\n%s", st, err, out.String())
				}
				return d, len(v.Held())
			}
			one(pred, "pred")
			var tp, th time.Duration
			held := 0
			b.ResetTimer()
			for range b.N {
				d, _ := one(pred, "pred")
				tp += d
				d, n := one(pred, "held")
				th += d
				held += n
			}
			b.StopTimer()
			if held != 400*b.N {
				b.Fatalf("%d calls held in %d runs, want 400 a run (200 creates, 200 removes)", held, b.N)
			}
			// Both runs route 400 calls (200 creates, 200 removes);
			// the held run holds each.
			b.ReportMetric(float64(tp.Microseconds())/float64(b.N)/400, "us-per-predicted")
			b.ReportMetric(float64(th.Microseconds())/float64(b.N)/400, "us-per-held")
			b.ReportMetric(float64((th-tp).Microseconds())/float64(held), "us-hold-extra")
		})
	}
}
