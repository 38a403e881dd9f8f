package main

// Attempts on other processes through system calls that neither name a
// path (Landlock's rules) nor send a signal (its signal scope): memory
// policy and page calls on another pid, pidfd signals to a whole group,
// scheduling of a user or a group, and a process made a sibling of the
// command (CLONE_PARENT), the keeper's child under landlock.

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func init() {
	attempts["xproc-mm"] = attemptXprocMM
	attempts["pidfd-group"] = attemptPidfdGroup
	attempts["sched-user"] = attemptSchedUser
	attempts["sched-self"] = attemptSchedSelf
	attempts["clone-parent"] = attemptCloneParent
	attempts["clone-parent-check"] = attemptCloneParentCheck
}

// refusedAccess: the kernel's answers to a caller that may not act on
// the process (or cannot see it).
func refusedAccess(e error) bool {
	return errors.Is(e, syscall.EPERM) || errors.Is(e, syscall.EACCES) || errors.Is(e, syscall.ESRCH)
}

// pidArg is PID, or the keeper for "keeper".
func pidArg(s string) (int, error) {
	if s == "keeper" {
		return keeper()
	}
	pid, err := strconv.Atoi(s)
	if err != nil || pid <= 1 {
		return 0, setup("pid %q", s)
	}
	return pid, nil
}

// xproc-mm PID|keeper: act on another process's memory without reading
// it: process_madvise (MADV_COLD, swap its pages out), move_pages (its
// pages' nodes), migrate_pages (to other nodes), get_robust_list (an
// address in it). Each passes the kernel's access check only with a
// ptrace right over the process, which Landlock keeps to the domain; an
// answer other than that refusal (ENOMEM for the unmapped range, or
// success) means the check let it through. Then kcmp (refused by the
// filter as well) and waitid on its pidfd.
func attemptXprocMM(a []string) error {
	pid, err := pidArg(arg(a, 0))
	if err != nil {
		return err
	}
	var last error = syscall.EPERM
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		// Not even seen (another pid namespace).
		return err
	}
	defer unix.Close(pidfd)
	// An unmapped page in most processes: past the check, ENOMEM.
	iov := unix.Iovec{Base: (*byte)(unsafe.Pointer(uintptr(0x10000))), Len: 4096}
	_, _, e := unix.Syscall6(unix.SYS_PROCESS_MADVISE, uintptr(pidfd), uintptr(unsafe.Pointer(&iov)), 1, unix.MADV_COLD, 0, 0)
	if e == 0 || !refusedAccess(e) {
		return allowed("process_madvise(pidfd of %d, MADV_COLD): %v", pid, e)
	}
	last = e
	pages := [1]uintptr{0x10000}
	status := [1]int32{}
	_, _, e = unix.Syscall6(unix.SYS_MOVE_PAGES, uintptr(pid), 1, uintptr(unsafe.Pointer(&pages[0])), 0, uintptr(unsafe.Pointer(&status[0])), 0)
	if e == 0 || !refusedAccess(e) {
		return allowed("move_pages(%d, query): %v (status %d)", pid, e, status[0])
	}
	last = e
	nodes := [1]uint64{1} // node 0 to node 0: nothing moves
	_, _, e = unix.Syscall6(unix.SYS_MIGRATE_PAGES, uintptr(pid), 64, uintptr(unsafe.Pointer(&nodes[0])), uintptr(unsafe.Pointer(&nodes[0])), 0, 0)
	if e == 0 || !refusedAccess(e) {
		return allowed("migrate_pages(%d, node 0 to node 0): %v", pid, e)
	}
	last = e
	// kcmp: whether guardrun holds the same file as this probe (its
	// stdout, say), the same check as reading its descriptors.
	const kcmpFile = 0
	_, _, e = unix.Syscall6(unix.SYS_KCMP, uintptr(os.Getpid()), uintptr(pid), kcmpFile, 1, 1, 0)
	if e == 0 || !refusedAccess(e) {
		return allowed("kcmp(self, %d, KCMP_FILE, 1, 1): %v", pid, e)
	}
	last = e
	// waitid on a pidfd of a process that is not this probe's child:
	// ECHILD, never its status.
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_PIDFD, pidfd, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil); err == nil {
		return allowed("waitid(P_PIDFD of %d) took it as a child", pid)
	} else if !errors.Is(err, syscall.ECHILD) {
		last = err
	}
	var head, size uintptr
	_, _, e = unix.Syscall(unix.SYS_GET_ROBUST_LIST, uintptr(pid), uintptr(unsafe.Pointer(&head)), uintptr(unsafe.Pointer(&size)))
	if e == 0 {
		return allowed("get_robust_list(%d): head %#x", pid, head)
	}
	if !refusedAccess(e) {
		last = e
	}
	return last
}

// pidfd_send_signal's flags (linux/pidfd.h, 6.9).
const (
	pidfdSignalThread       = 1 << 0
	pidfdSignalThreadGroup  = 1 << 1
	pidfdSignalProcessGroup = 1 << 2
)

// pidfd-group PID|keeper: a null signal through a pidfd of PID with each
// scope flag: the thread, its thread group, and its whole process group
// (where one check per member is the only guard). A kernel without the
// flags answers EINVAL, refused as well.
func attemptPidfdGroup(a []string) error {
	pid, err := pidArg(arg(a, 0))
	if err != nil {
		return err
	}
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		// Not even seen (another pid namespace).
		return err
	}
	defer unix.Close(pidfd)
	var last error = syscall.EPERM
	var seen []string
	for _, fl := range []int{0, pidfdSignalThread, pidfdSignalThreadGroup, pidfdSignalProcessGroup} {
		// A group scope succeeds if any member takes the signal: this
		// probe first leaves a group it shares with PID (the keeper's,
		// which then holds the keeper alone).
		if fl == pidfdSignalProcessGroup {
			if pg, err := unix.Getpgid(pid); err == nil && pg == unix.Getpgrp() {
				if err := unix.Setpgid(0, 0); err != nil {
					return setup("leave the process group of %d: %v", pid, err)
				}
			}
		}
		err := unix.PidfdSendSignal(pidfd, 0, nil, fl)
		if err == nil {
			return allowed("pidfd_send_signal(pidfd of %d, 0, flags %#x)", pid, fl)
		}
		seen = append(seen, fmt.Sprintf("%#x: %v", fl, err))
		if !errors.Is(err, syscall.EINVAL) {
			last = err
		}
	}
	return fmt.Errorf("%s: %w", strings.Join(seen, "; "), last)
}

// sched-user: the scheduling calls that name no process: every process
// of the user (PRIO_USER, IOPRIO_WHO_USER, by uid and as 0, the
// caller's), and the caller's own process group (PRIO_PGRP 0,
// IOPRIO_WHO_PGRP 0), which under landlock holds the keeper. Each sets
// the value the caller has, which the kernel checks as any change.
func attemptSchedUser([]string) error {
	uid := os.Getuid()
	r, _, e := unix.Syscall(unix.SYS_GETPRIORITY, unix.PRIO_PROCESS, 0, 0)
	if e != 0 {
		return setup("getpriority: %v", e)
	}
	nice := 20 - int(r)
	var last error = syscall.EPERM
	for _, w := range [][2]int{{unix.PRIO_USER, uid}, {unix.PRIO_USER, 0}, {unix.PRIO_PGRP, 0}} {
		if err := unix.Setpriority(w[0], w[1], nice); err == nil {
			return allowed("setpriority(%d, %d, %d)", w[0], w[1], nice)
		} else {
			last = err
		}
	}
	io, _, e := unix.Syscall(unix.SYS_IOPRIO_GET, ioprioWhoProcess, 0, 0)
	if e != 0 {
		return setup("ioprio_get: %v", e)
	}
	const ioprioWhoUser = 3
	for _, w := range [][2]int{{ioprioWhoUser, uid}, {ioprioWhoUser, 0}, {ioprioWhoPgrp, 0}} {
		if _, _, e := unix.Syscall(unix.SYS_IOPRIO_SET, uintptr(w[0]), uintptr(w[1]), io); e == 0 {
			return allowed("ioprio_set(%d, %d)", w[0], w[1])
		} else {
			last = e
		}
	}
	return last
}

// clone-parent PID MARKER: start a process with CLONE_PARENT, a sibling
// of this probe and so the keeper's child under landlock (not one it
// waits for), that tries to signal guardrun (PID) and its new parent,
// then sleeps with MARKER; the test checks that it is gone after the
// command. It reports on a pipe.
func attemptCloneParent(a []string) error {
	pid, marker := arg(a, 0), arg(a, 1)
	self, err := os.Executable()
	if err != nil {
		return setup("%v", err)
	}
	c := exec.Command(self, "clone-parent-check", pid, marker)
	c.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_PARENT}
	out, err := c.StdoutPipe()
	if err != nil {
		return setup("%v", err)
	}
	// No descriptor of the command's output: holding it, the sibling
	// would keep guardrun waiting for its end (WaitDelay).
	c.Stderr = nil
	if err := c.Start(); err != nil {
		return setup("clone(CLONE_PARENT): %v", err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return setup("the sibling's report: %v", err)
	}
	line = strings.TrimSpace(line)
	if strings.HasPrefix(line, "ALLOWED ") {
		return allowed("from a CLONE_PARENT sibling: %s", strings.TrimPrefix(line, "ALLOWED "))
	}
	if !strings.HasPrefix(line, "REFUSED ") {
		return setup("the sibling said %q", line)
	}
	return fmt.Errorf("%s: %w", strings.TrimPrefix(line, "REFUSED "), syscall.EPERM)
}

// clone-parent-check PID MARKER: the sibling's part. Its parent must
// not be this probe; if it is the keeper, the keeper must be out of
// reach, as guardrun is.
func attemptCloneParentCheck(a []string) error {
	pid, err := strconv.Atoi(arg(a, 0))
	if err != nil {
		fmt.Println("SETUP pid", arg(a, 0))
		os.Exit(exitUsage)
	}
	report := func(s string) {
		fmt.Println(s)
		os.Stdout.Close()
		time.Sleep(30 * time.Second)
		os.Exit(0)
	}
	if err := unix.Kill(pid, 0); err == nil {
		report(fmt.Sprintf("ALLOWED kill(guardrun %d, 0)", pid))
	}
	pp := os.Getppid()
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pp) + "/cmdline")
	if strings.Contains(string(b), nestMarker) {
		if err := unix.Kill(pp, 0); err == nil {
			report(fmt.Sprintf("ALLOWED kill(its parent, the keeper %d, 0)", pp))
		}
		report(fmt.Sprintf("REFUSED the keeper's child %d could signal neither guardrun nor the keeper", os.Getpid()))
	}
	report(fmt.Sprintf("REFUSED child %d of %d could not signal guardrun", os.Getpid(), pp))
	return nil
}

// sched-self: give itself more CPU than guardrun and the keeper get,
// which starves them as surely as lowering theirs: a real-time policy
// (SCHED_FIFO, SCHED_RR at priority 1, through sched_setscheduler and
// sched_setattr) and a nice value below the one it started with
// (guardrun's). The user's RLIMIT_RTPRIO and RLIMIT_NICE decide; the
// command must have neither, whatever guardrun had.
func attemptSchedSelf([]string) error {
	var last error = syscall.EPERM
	prio := [1]int32{1}
	for _, pol := range []int{unix.SCHED_FIFO, unix.SCHED_RR} {
		if _, _, e := unix.Syscall(unix.SYS_SCHED_SETSCHEDULER, 0, uintptr(pol), uintptr(unsafe.Pointer(&prio[0]))); e == 0 {
			return allowed("sched_setscheduler(0, %d, 1): real time", pol)
		} else {
			last = e
		}
	}
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: 1}
	if err := unix.SchedSetAttr(0, &attr, 0); err == nil {
		return allowed("sched_setattr(0, SCHED_FIFO 1): real time")
	} else {
		last = err
	}
	r, _, e := unix.Syscall(unix.SYS_GETPRIORITY, unix.PRIO_PROCESS, 0, 0)
	if e != 0 {
		return setup("getpriority: %v", e)
	}
	nice := 20 - int(r)
	if nice > -20 {
		if err := unix.Setpriority(unix.PRIO_PROCESS, 0, nice-1); err == nil {
			return allowed("setpriority(PRIO_PROCESS, 0, %d) below its starting %d", nice-1, nice)
		} else {
			last = err
		}
		// The same through sched_setattr's nice, and through its
		// autogroup's nice (its session's whole group against
		// guardrun's), which the same limit governs.
		attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_NORMAL, Nice: int32(nice - 1)}
		if err := unix.SchedSetAttr(0, &attr, 0); err == nil {
			return allowed("sched_setattr(0, SCHED_NORMAL, nice %d) below its starting %d", nice-1, nice)
		}
		if ag, err := os.ReadFile("/proc/self/autogroup"); err == nil {
			var n int
			if i := strings.LastIndex(string(ag), "nice "); i >= 0 {
				fmt.Sscanf(string(ag[i+5:]), "%d", &n)
			}
			if n > -20 {
				if err := os.WriteFile("/proc/self/autogroup", []byte(strconv.Itoa(n-1)), 0); err == nil {
					return allowed("its autogroup's nice set to %d below %d", n-1, n)
				} else {
					fmt.Fprintf(os.Stderr, "autogroup: %v\n", err)
				}
			}
		}
	}
	// SCHED_DEADLINE runs before every fair task.
	dl := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: 6, Runtime: 1e6, Deadline: 1e7, Period: 1e7}
	if err := unix.SchedSetAttr(0, &dl, 0); err == nil {
		return allowed("sched_setattr(0, SCHED_DEADLINE)")
	}
	return last
}

func init() { attempts["tty-steal"] = attemptTTYSteal }

// tty-steal: its stdin is a terminal that is another session's
// controlling terminal (the person's, in real use). Make its own process
// group that terminal's foreground one, then, in a new session, make the
// terminal its own (TIOCSCTTY, also forcing it), or the console
// (TIOCCONS). Made its controlling process, its exit would hang up the
// terminal: SIGHUP, from the kernel, to the person's shell.
func attemptTTYSteal([]string) error {
	if _, err := unix.IoctlGetTermios(0, unix.TCGETS); err != nil {
		return setup("stdin is not a terminal: %v", err)
	}
	var last error = syscall.EPERM
	if err := unix.IoctlSetPointerInt(0, unix.TIOCSPGRP, unix.Getpgrp()); err == nil {
		return allowed("made its process group the terminal's foreground one")
	} else {
		last = err
	}
	if _, err := unix.Setsid(); err != nil {
		return setup("setsid: %v", err)
	}
	for _, force := range []int{0, 1} {
		if err := unix.IoctlSetInt(0, unix.TIOCSCTTY, force); err == nil {
			return allowed("made the terminal its controlling terminal (force %d)", force)
		} else {
			last = err
		}
	}
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, 0, unix.TIOCCONS, 0); e == 0 {
		return allowed("made the terminal the console (TIOCCONS)")
	}
	return last
}

func init() { attempts["proc-write"] = attemptProcWrite }

// procWritable are the entries of /proc/PID that the kernel lets the
// process's own user write with no ptrace check (the file's owner
// decides): its OOM score (raised to 1000, it is the first the kernel
// kills when the command fills memory), its autogroup's nice value
// (starving it), its core dump filter, its name.
var procWritable = []string{"oom_score_adj", "oom_adj", "autogroup", "coredump_filter", "comm"}

// proc-write PID|keeper: write each of PID's entries above with the
// value it holds (autogroup: its nice value), which the kernel checks
// as any change.
func attemptProcWrite(a []string) error {
	pid, err := pidArg(arg(a, 0))
	if err != nil {
		return err
	}
	var last error = syscall.EACCES
	for _, n := range procWritable {
		p := "/proc/" + strconv.Itoa(pid) + "/" + n
		cur, err := os.ReadFile(p)
		if err != nil {
			last = err
			continue
		}
		v := strings.TrimSpace(string(cur))
		if n == "autogroup" {
			// "/autogroup-N nice V"; empty for a process in the
			// root autogroup (no setsid since boot in its line, as
			// under a CI runner's init; the kernel's threads), or
			// one exiting: nice 0 then, which the open is refused
			// before, as for any value.
			if f := strings.Fields(v); len(f) > 0 {
				v = f[len(f)-1]
			} else {
				v = "0"
			}
		}
		fd, err := unix.Open(p, unix.O_WRONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			last = err
			continue
		}
		_, werr := unix.Write(fd, []byte(v))
		unix.Close(fd)
		if werr == nil {
			return allowed("wrote %q to %s", v, p)
		}
		last = werr
	}
	return last
}
