//go:build linux

package runner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guardrun/guardrun/landlock"
)

// TestSignalAtAnyMoment: a SIGINT (or SIGTERM) sent to guardrun at any
// moment after it started the sandbox ends the command, with status 130
// (143), and leaves nothing running. The moments are a spread of delays after the
// sandbox's first process appears, and the instants where the signal
// was lost: under bwrap after the sandbox's init made its session and
// before it forked the command (the group held the init alone, which as
// pid 1 drops the signal); under landlock after the keeper blocked its
// signals and before it forked the command (the signal stayed with the
// keeper). The bound is generous: this checks that the command ends,
// not how fast.
func TestSignalAtAnyMoment(t *testing.T) {
	requireSandbox(t)
	backends := []string{testBackend}
	if testBackend == BackendBwrap {
		backends = append(backends, BackendLandlock)
	}
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			if backend != testBackend {
				if err := landlock.Check(); err != nil {
					t.Skipf("landlock unavailable: %v", err)
				}
			}
			f := newFixture(t)
			type row struct {
				name    string
				delay   time.Duration
				instant bool
				sig     syscall.Signal
			}
			var rows []row
			for ms := range 16 {
				rows = append(rows, row{name: fmt.Sprintf("%dms", ms), delay: time.Duration(ms) * time.Millisecond, sig: syscall.SIGINT})
			}
			for _, ms := range []int{20, 30, 50, 100} {
				rows = append(rows, row{name: fmt.Sprintf("%dms", ms), delay: time.Duration(ms) * time.Millisecond, sig: syscall.SIGINT})
			}
			for i := range 10 {
				rows = append(rows, row{name: "instant-" + strconv.Itoa(i), instant: true, sig: syscall.SIGINT})
			}
			for i := range 4 {
				rows = append(rows, row{name: "instant-SIGTERM-" + strconv.Itoa(i), instant: true, sig: syscall.SIGTERM})
			}
			lost := 0
			for i, r := range rows {
				marker := f.marker + "-race-" + strconv.Itoa(i)
				if !signalEnds(t, f, backend, marker, r.name, r.sig, r.delay, r.instant) {
					lost++
				}
			}
			if lost > 0 {
				t.Errorf("%d of %d signals did not end the command", lost, len(rows))
			}
		})
	}
}

// signalEnds runs the probe's sleep under backend, sends this process
// sig once the sandbox's first process has appeared and delay has
// passed (or, with instant, at the instant described above), and
// reports whether the command ended with 128+sig within 10 s, leaving
// nothing behind. A command still running then is ended by cancelling.
func signalEnds(t *testing.T, f *fixture, backend, marker, name string, sig syscall.Signal, delay time.Duration, instant bool) bool {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		status int
		err    error
	}
	done := make(chan result, 1)
	go func() {
		st, err := RunWith(ctx, Options{Backend: testBackendNamed(backend), LandlockAccept: f.accept}, f.profile, []string{probePath, "sleep", "100", marker}, f.env, Stdio{})
		done <- result{st, err}
	}()
	first := 0
	deadline := time.Now().Add(20 * time.Second)
	for first == 0 && time.Now().Before(deadline) {
		first = childWith(os.Getpid(), marker)
	}
	if first == 0 {
		select {
		case r := <-done:
			t.Fatalf("%s: the sandbox ended before it was seen: status %d, %v", name, r.status, r.err)
		default:
			t.Fatalf("%s: the sandbox did not start", name)
		}
	}
	if instant {
		waitInstant(backend, first)
	} else {
		time.Sleep(delay)
	}
	if err := syscall.Kill(os.Getpid(), sig); err != nil {
		t.Fatal(err)
	}
	ok := true
	select {
	case r := <-done:
		if r.err != nil {
			t.Errorf("%s: %v", name, r.err)
			ok = false
		} else if r.status != 128+int(sig) {
			t.Errorf("%s: status %d, want %d", name, r.status, 128+int(sig))
			ok = false
		}
	case <-time.After(10 * time.Second):
		t.Errorf("%s: the signal did not end the command", name)
		cancel()
		<-done
		ok = false
	}
	if !waitFor(3*time.Second, func() bool { return len(markerProcesses(marker)) == 0 }) {
		t.Errorf("%s: processes survived: %q", name, markerProcesses(marker))
		ok = false
	}
	return ok
}

// waitInstant waits (at most 2 s) for the instant in the sandbox's
// start-up where a signal used to be lost: under bwrap, the sandbox's
// init (bwrap's child) leading a process group of its own; under
// landlock, the keeper (first) with SIGINT blocked.
func waitInstant(backend string, first int) {
	deadline := time.Now().Add(2 * time.Second)
	if backend == BackendLandlock {
		for time.Now().Before(deadline) && !blocksSIGINT(first) {
		}
		return
	}
	init := 0
	for time.Now().Before(deadline) {
		if init == 0 {
			init = childOf(first)
			continue
		}
		if _, pgrp, ok := procStat(init); !ok || pgrp == init {
			return
		}
	}
}

// childWith is a child of parent whose command line holds marker, or 0.
func childWith(parent int, marker string) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, _, ok := procStat(pid); !ok || ppid != parent {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && bytes.Contains(b, []byte(marker)) {
			return pid
		}
	}
	return 0
}

// childOf is a child of parent, or 0; bwrap clones the sandbox's init
// right away, so its pid is nearly always just above bwrap's.
func childOf(parent int) int {
	for pid := parent + 1; pid < parent+64; pid++ {
		if ppid, _, ok := procStat(pid); ok && ppid == parent {
			return pid
		}
	}
	return 0
}

// procStat is the parent and process group of pid.
func procStat(pid int) (ppid, pgrp int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 3 {
		return 0, 0, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgrp, err2 := strconv.Atoi(f[2])
	return ppid, pgrp, err1 == nil && err2 == nil
}

// blocksSIGINT reports whether pid has SIGINT blocked, or has gone past
// the instant it does: while the keeper waits in sigwaitinfo the kernel
// shows the signals it waits for unblocked. (A gone pid has too.)
func blocksSIGINT(pid int) bool {
	p := "/proc/" + strconv.Itoa(pid)
	b, err := os.ReadFile(p + "/status")
	if err != nil {
		return true
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "SigBlk:"); ok {
			if m, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64); err == nil && m&(1<<(syscall.SIGINT-1)) != 0 {
				return true
			}
		}
	}
	w, _ := os.ReadFile(p + "/wchan")
	return strings.Contains(string(w), "sigtimedwait")
}
