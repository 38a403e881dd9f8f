package main

// Attempts on the landlock backend's keeper (landlock/nest_cgo_linux.go):
// the trampoline that starts the command, stays in the outer Landlock
// domain as the command's parent, relays guardrun's signals to a command
// that left its process group, and ends the domain if guardrun dies. The
// command must be able neither to signal it, nor to read or change it
// through /proc, nor to make it relay a signal, nor to change how it is
// scheduled; and going through the trampoline again, with any argv, must
// only restrict further.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func init() {
	attempts["keeper-signal"] = attemptKeeperSignal
	attempts["keeper-proc"] = attemptKeeperProc
	attempts["sched"] = attemptSched
	attempts["nest-args"] = attemptNestArgs
	attempts["nest-orphan"] = attemptNestOrphan
}

const nestMarker = "\x01guardrun-landlock-nest"

// keeper is the probe's parent, which must be the keeper: its command
// line is guardrun's with the trampoline's marker.
func keeper() (int, error) {
	pid := os.Getppid()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return 0, setup("the parent's command line: %v", err)
	}
	if !bytes.Contains(b, []byte(nestMarker)) {
		return 0, setup("the parent %d is not the keeper: %q", pid, b)
	}
	return pid, nil
}

// keeperSigs are the signals tried on the keeper: 0 (only the check),
// the fatal ones, the stops, SIGCHLD (which makes it reap), and
// SIGRTMIN+2 as glibc numbers it, the keeper's parent-death signal.
var keeperSigs = []syscall.Signal{0, syscall.SIGKILL, syscall.SIGTERM, syscall.SIGSTOP, syscall.SIGTSTP,
	syscall.SIGCHLD, syscall.SIGHUP, syscall.SIGUSR1, syscall.Signal(36), syscall.Signal(64)}

// keeper-signal: every way to send the keeper a signal (kill, tgkill,
// rt_sigqueueinfo, pidfd_send_signal, its process group, F_SETOWN),
// then leave the keeper's process group and signal that group, which now
// holds the keeper alone: a signal the keeper took would be relayed back
// here, to a command that left the group.
func attemptKeeperSignal([]string) error {
	k, err := keeper()
	if err != nil {
		return err
	}
	for _, s := range keeperSigs {
		// A stop that got through is undone, so that the test reports
		// instead of waiting for a stopped keeper.
		defer unix.Kill(k, syscall.SIGCONT)
		if err := unix.Kill(k, s); err == nil {
			return allowed("kill(keeper %d, %d)", k, s)
		}
		if err := unix.Tgkill(k, k, s); err == nil {
			return allowed("tgkill(keeper %d, %d)", k, s)
		}
		info := unix.Siginfo{Signo: int32(s), Code: -1} // SI_QUEUE
		if _, _, e := unix.Syscall(unix.SYS_RT_SIGQUEUEINFO, uintptr(k), uintptr(s), uintptr(unsafe.Pointer(&info))); e == 0 {
			return allowed("rt_sigqueueinfo(keeper %d, %d)", k, s)
		}
		if _, _, e := unix.Syscall6(unix.SYS_RT_TGSIGQUEUEINFO, uintptr(k), uintptr(k), uintptr(s), uintptr(unsafe.Pointer(&info)), 0, 0); e == 0 {
			return allowed("rt_tgsigqueueinfo(keeper %d, %d)", k, s)
		}
		if fd, err := unix.PidfdOpen(k, 0); err == nil {
			err := unix.PidfdSendSignal(fd, s, nil, 0)
			unix.Close(fd)
			if err == nil {
				return allowed("pidfd_send_signal(keeper %d, %d)", k, s)
			}
		}
	}
	// The keeper as a socket's owner, its signal SIGKILL.
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return setup("socketpair: %v", err)
	}
	if _, err := unix.FcntlInt(uintptr(fds[0]), unix.F_SETOWN, k); err == nil {
		unix.FcntlInt(uintptr(fds[0]), unix.F_SETSIG, int(unix.SIGKILL))
		fl, _ := unix.FcntlInt(uintptr(fds[0]), unix.F_GETFL, 0)
		unix.FcntlInt(uintptr(fds[0]), unix.F_SETFL, fl|unix.O_ASYNC)
		unix.Write(fds[1], []byte("x"))
	}
	unix.Close(fds[0])
	unix.Close(fds[1])
	time.Sleep(200 * time.Millisecond)
	if os.Getppid() != k {
		return allowed("the keeper %d is gone after SIGIO as SIGKILL", k)
	}
	// Leave the group, then signal it: it holds the keeper alone.
	got := make(chan os.Signal, 4)
	signal.Notify(got, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH)
	if err := unix.Setpgid(0, 0); err != nil {
		return setup("setpgid: %v", err)
	}
	for _, s := range []syscall.Signal{syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGWINCH} {
		if err := unix.Kill(-k, s); err == nil {
			return allowed("signal %d to the keeper's process group %d, which holds only the keeper now", s, k)
		}
	}
	select {
	case s := <-got:
		return allowed("the keeper relayed %v to this command", s)
	case <-time.After(300 * time.Millisecond):
	}
	return syscall.EPERM
}

// keeperProc are the keeper's /proc entries the command must not open
// (ptrace's access check, which Landlock's keeps to the same or a nested
// domain): its memory, environment (guardrun's, before env_deny), open
// files, working and root directories, executable, maps and the like.
var keeperProc = []string{"mem", "environ", "auxv", "maps", "smaps", "pagemap", "stack", "syscall", "io",
	"personality", "fd", "fdinfo", "map_files", "cwd", "root", "exe", "ns/pid", "ns/mnt"}

// keeper-proc: open each of the keeper's (and of its threads') /proc
// entries above, for reading and, for mem, for writing; read the links.
func attemptKeeperProc([]string) error {
	k, err := keeper()
	if err != nil {
		return err
	}
	dirs := []string{"/proc/" + strconv.Itoa(k)}
	if ts, err := tasks(strconv.Itoa(k)); err == nil {
		for _, t := range ts {
			dirs = append(dirs, "/proc/"+strconv.Itoa(k)+"/task/"+t)
		}
	}
	var last error = syscall.EACCES
	for _, d := range dirs {
		for _, n := range keeperProc {
			p := d + "/" + n
			if l, err := os.Readlink(p); err == nil {
				return allowed("read the link %s: %s", p, l)
			}
			fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err == nil {
				buf := make([]byte, 4096)
				n, rerr := unix.Read(fd, buf)
				if st, _ := os.Stat(p); st != nil && st.IsDir() {
					// Listing fd and fdinfo is the owner's (their
					// numbers); what each one is, is the keeper's.
					ents, derr := os.ReadDir(p)
					unix.Close(fd)
					if derr != nil {
						last = derr
						continue
					}
					for _, e := range ents {
						q := p + "/" + e.Name()
						if l, err := os.Readlink(q); err == nil {
							return allowed("read the link %s: %s", q, l)
						}
						if b, err := os.ReadFile(q); err == nil {
							return allowed("read %s: %q", q, b)
						}
					}
					last = syscall.EACCES
					continue
				}
				unix.Close(fd)
				if rerr == nil && n > 0 {
					return allowed("read %d bytes of %s", n, p)
				}
				// mem opened: reading at 0 fails; opening was the check.
				if strings.HasSuffix(p, "/mem") {
					return allowed("opened %s", p)
				}
				last = rerr
				continue
			}
			last = err
		}
		if fd, err := unix.Open(d+"/mem", unix.O_RDWR|unix.O_CLOEXEC, 0); err == nil {
			unix.Close(fd)
			return allowed("opened %s/mem for writing", d)
		}
		// Opening it is anyone's (its mode is 0666): the write is
		// checked. The kernel's default slack, 50 us.
		if fd, err := unix.Open(d+"/timerslack_ns", unix.O_WRONLY|unix.O_CLOEXEC, 0); err == nil {
			_, werr := unix.Write(fd, []byte("50000"))
			unix.Close(fd)
			if werr == nil {
				return allowed("wrote %s/timerslack_ns", d)
			}
			last = werr
		}
	}
	return last
}

// ioprio_set's which and class values (linux/ioprio.h).
const (
	ioprioWhoProcess = 1
	ioprioWhoPgrp    = 2
	ioprioClassShift = 13
)

// sched PID|keeper: change how PID (a host process, or the keeper) is
// scheduled: its nice value (PRIO_PROCESS and its process group),
// policy, CPU affinity, I/O priority. Each is set to the value it has,
// which the kernel checks as any change: allowed, it could set the
// lowest priority, SCHED_IDLE or one CPU instead, starving the process.
func attemptSched(a []string) error {
	var pid int
	var err error
	if arg(a, 0) == "keeper" {
		if pid, err = keeper(); err != nil {
			return err
		}
	} else if pid, err = strconv.Atoi(arg(a, 0)); err != nil || pid <= 1 {
		return setup("pid %q", arg(a, 0))
	}
	var last error = syscall.EPERM
	note := func(err error) {
		if err != nil {
			last = err
		}
	}
	// getpriority's raw value is 20-nice.
	if r, _, e := unix.Syscall(unix.SYS_GETPRIORITY, unix.PRIO_PROCESS, uintptr(pid), 0); e == 0 {
		nice := 20 - int(r)
		if err := unix.Setpriority(unix.PRIO_PROCESS, pid, nice); err == nil {
			return allowed("setpriority(PRIO_PROCESS, %d, %d)", pid, nice)
		} else {
			note(err)
		}
		if pg, err := unix.Getpgid(pid); err == nil {
			if err := unix.Setpriority(unix.PRIO_PGRP, pg, nice); err == nil {
				return allowed("setpriority(PRIO_PGRP, %d, %d)", pg, nice)
			} else {
				note(err)
			}
		}
	} else {
		note(e)
	}
	pol, _, e := unix.Syscall(unix.SYS_SCHED_GETSCHEDULER, uintptr(pid), 0, 0)
	if e == 0 {
		var prio [1]int32
		if _, _, e := unix.Syscall(unix.SYS_SCHED_GETPARAM, uintptr(pid), uintptr(unsafe.Pointer(&prio[0])), 0); e == 0 {
			if _, _, e := unix.Syscall(unix.SYS_SCHED_SETSCHEDULER, uintptr(pid), pol, uintptr(unsafe.Pointer(&prio[0]))); e == 0 {
				return allowed("sched_setscheduler(%d, %d)", pid, pol)
			} else {
				note(e)
			}
			if _, _, e := unix.Syscall(unix.SYS_SCHED_SETPARAM, uintptr(pid), uintptr(unsafe.Pointer(&prio[0])), 0); e == 0 {
				return allowed("sched_setparam(%d)", pid)
			} else {
				note(e)
			}
		}
	} else {
		note(e)
	}
	var attr unix.SchedAttr
	if got, err := unix.SchedGetAttr(pid, 0); err == nil {
		attr = *got
		if err := unix.SchedSetAttr(pid, &attr, 0); err == nil {
			return allowed("sched_setattr(%d, policy %d)", pid, attr.Policy)
		} else {
			note(err)
		}
	} else {
		note(err)
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(pid, &set); err == nil {
		if err := unix.SchedSetaffinity(pid, &set); err == nil {
			return allowed("sched_setaffinity(%d, %d CPUs)", pid, set.Count())
		} else {
			note(err)
		}
	} else {
		note(err)
	}
	if r, _, e := unix.Syscall(unix.SYS_IOPRIO_GET, ioprioWhoProcess, uintptr(pid), 0); e == 0 {
		if _, _, e := unix.Syscall(unix.SYS_IOPRIO_SET, ioprioWhoProcess, uintptr(pid), r); e == 0 {
			return allowed("ioprio_set(IOPRIO_WHO_PROCESS, %d, class %d)", pid, r>>ioprioClassShift)
		} else {
			note(e)
		}
		if pg, err := unix.Getpgid(pid); err == nil {
			if _, _, e := unix.Syscall(unix.SYS_IOPRIO_SET, ioprioWhoPgrp, uintptr(pg), r); e == 0 {
				return allowed("ioprio_set(IOPRIO_WHO_PGRP, %d)", pg)
			} else {
				note(e)
			}
		}
	} else {
		note(e)
	}
	var lim unix.Rlimit
	if err := unix.Prlimit(pid, unix.RLIMIT_CPU, nil, &lim); err == nil {
		if err := unix.Prlimit(pid, unix.RLIMIT_CPU, &lim, nil); err == nil {
			return allowed("prlimit(%d, RLIMIT_CPU)", pid)
		} else {
			note(err)
		}
	} else {
		note(err)
	}
	return last
}

// nest-args EXE PID CANARY: start guardrun's executable EXE as the
// trampoline with crafted argv (three arguments exactly, so that
// guardrun's own main runs; PATH a directory, a missing file, empty,
// relative, the trampoline again with odd argv, and the probe), each time
// asking the probe at the end to signal guardrun (PID), to read CANARY
// (outside every zone) and to signal its own keeper. Going through the
// trampoline must only restrict further: none may succeed, and whatever
// cannot start must not exit 0.
func attemptNestArgs(a []string) error {
	exe, pid, canary := arg(a, 0), arg(a, 1), arg(a, 2)
	self, err := os.Executable()
	if err != nil {
		return setup("%v", err)
	}
	dir := filepath.Dir(self)
	tries := func(path string) [][]string {
		return [][]string{
			{"guardrun", nestMarker, path, "probe", "signal-thread", pid},
			{"guardrun", nestMarker, path, "probe", "read", canary},
			{"guardrun", nestMarker, path, "probe", "keeper-signal"},
			{"guardrun", nestMarker, path, "probe", "keeper-proc"},
		}
	}
	// (Three arguments or fewer run guardrun's own main: here the test
	// binary's, so the integration tests try those with guardrun.)
	variants := [][]string{
		// Not a program.
		{"guardrun", nestMarker, dir, "x"},
		{"guardrun", nestMarker, filepath.Join(dir, "missing"), "x"},
		{"guardrun", nestMarker, "", "x"},
		// The marker twice.
		{"guardrun", nestMarker, nestMarker, "x"},
	}
	variants = append(variants, tries(self)...)
	// Nested twice: the inner keeper sits in the command's domain, the
	// probe two domains down.
	for _, v := range tries(self) {
		variants = append(variants, append([]string{"guardrun", nestMarker, exe}, v...))
	}
	variants = append(variants, append([]string{"guardrun", nestMarker, exe, "guardrun", nestMarker, exe}, tries(self)[0]...))
	var last error = syscall.EPERM
	for _, v := range variants {
		c := exec.Command(exe)
		c.Args = v
		c.Dir = dir
		c.Env = os.Environ()
		out, err := c.CombinedOutput()
		fmt.Fprintf(os.Stderr, "trampoline %q: %v: %s\n", v[1:], err, bytes.TrimSpace(out))
		text := string(out)
		if strings.Contains(text, " ALLOWED") {
			return allowed("through the trampoline %q: %s", v[2:], strings.TrimSpace(text))
		}
		probeRan := strings.Contains(text, "RESULT ")
		if probeRan && !strings.Contains(text, " refused errno=") {
			return allowed("the trampoline %q: no refusal: %s", v[2:], text)
		}
		if !probeRan && err == nil {
			return allowed("the trampoline %q exited 0 without running anything: %s", v[2:], text)
		}
		last = fmt.Errorf("%q: %v", v[2:], err)
		if probeRan {
			last = syscall.EPERM
		}
	}
	return last
}

// nest-orphan EXE MARKER: through the trampoline (a keeper in this
// probe's domain, a shell one domain down), start the trampoline again
// in the background and let the shell exit, so that the inner keeper's
// parent dies and its parent-death path runs (kill(-1) in its domain).
// It must end its own domain (the probe sleeping with MARKER below it)
// and nothing else: not this probe, one domain up, which would then die
// without a result line; the test checks the host side.
func attemptNestOrphan(a []string) error {
	// This probe's own arguments hold MARKER: the sleeper's holds more.
	exe, marker := arg(a, 0), arg(a, 1)+"-inner"
	self, err := os.Executable()
	if err != nil {
		return setup("%v", err)
	}
	c := exec.Command(exe)
	c.Args = []string{"guardrun", nestMarker, "/bin/sh", "sh", "-c",
		`"$0" "$1" "$2" probe sleep 30 "$3" & sleep 0.5; exit 0`, exe, nestMarker, self, marker}
	c.Stdout, c.Stderr = os.Stderr, os.Stderr
	if err := c.Run(); err != nil {
		return setup("the trampoline with sh: %v", err)
	}
	left := true
	for i := 0; i < 50 && left; i++ {
		time.Sleep(100 * time.Millisecond)
		left = running(marker)
	}
	if left {
		// Not out of the command's domain (guardrun ends it after the
		// command), but the keeper did not do what it is there for.
		return allowed("the inner keeper's domain (%s) still runs 5 s after the keeper's parent died", marker)
	}
	return fmt.Errorf("the inner keeper ended its own domain, and not this probe: %w", syscall.EPERM)
}

// running reports whether a process has marker as an argument.
func running(marker string) bool {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		for _, f := range strings.Split(string(b), "\x00") {
			if f == marker {
				if st, _ := os.ReadFile("/proc/" + e.Name() + "/stat"); !strings.Contains(string(st), ") Z ") {
					return true
				}
			}
		}
	}
	return false
}

func init() { attempts["posix-mq"] = attemptPosixMQ }

// posix-mq NAME: open the host's POSIX message queue NAME (no leading
// slash), take its message and put one in: no IPC namespace under
// landlock, and mq_open takes no path Landlock's rules name.
func attemptPosixMQ(a []string) error {
	name, err := unix.BytePtrFromString(arg(a, 0))
	if err != nil {
		return setup("name %q", arg(a, 0))
	}
	fd, _, e := unix.Syscall6(unix.SYS_MQ_OPEN, uintptr(unsafe.Pointer(name)), unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0, 0, 0, 0)
	if e != 0 {
		return e
	}
	defer unix.Close(int(fd))
	buf := make([]byte, 8192)
	n, _, e := unix.Syscall6(unix.SYS_MQ_TIMEDRECEIVE, fd, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0, 0)
	if e != 0 {
		return allowed("opened the host's message queue /%s (receive: %v)", arg(a, 0), e)
	}
	return allowed("opened the host's message queue /%s and took its message %q", arg(a, 0), buf[:n])
}
