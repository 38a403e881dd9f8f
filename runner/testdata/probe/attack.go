package main

// More attempts (runner/attack_landlock_test.go): ways out that
// go through guardrun itself (its memory, its threads, its limits, its
// restore after the command) and through what a backend without
// namespaces shares with the host (SysV IPC, inotify, SIGIO).

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func init() {
	for name, f := range map[string]func([]string) error{
		"parent-memory":   attemptParentMemory,
		"signal-thread":   attemptSignalThread,
		"prlimit":         attemptPrlimit,
		"kill-guardrun":   attemptKillGuardrun,
		"sysv-shm":        attemptSysvShm,
		"sigio":           attemptSigio,
		"pidfd-kill":      attemptPidfdKill,
		"tmpfile-link":    attemptTmpfileLink,
		"truncate":        attemptTruncate,
		"bind-abstract":   attemptBindAbstract,
		"bind-path":       attemptBindPath,
		"proc-root-write": attemptProcRootWrite,
		"proc-mem-write":  attemptProcMemWrite,
		"inotify":         attemptInotify,
		"quarantine-fill": attemptQuarantineFill,
		"chmod-dir":       attemptChmodDir,
	} {
		attempts[name] = f
	}
}

// tasks lists the thread ids of pid.
func tasks(pid string) ([]string, error) {
	ents, err := os.ReadDir("/proc/" + pid + "/task")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out, nil
}

func reverse(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

// parent-memory PID REVERSED: look for a secret of guardrun's (PID, the
// process that started the sandbox) in the environment and memory of
// each of its threads. The secret comes reversed, so that the probe's
// own arguments do not hold it.
func attemptParentMemory(a []string) error {
	pid, secret := arg(a, 0), []byte(reverse(arg(a, 1)))
	ts, err := tasks(pid)
	if err != nil {
		return err
	}
	var last error = syscall.EACCES
	for _, tid := range ts {
		dir := "/proc/" + pid + "/task/" + tid
		if env, err := os.ReadFile(dir + "/environ"); err == nil {
			if bytes.Contains(env, secret) {
				return allowed("read the secret in %s/environ", dir)
			}
		} else {
			last = err
		}
		maps, err := os.ReadFile(dir + "/maps")
		if err != nil {
			last = err
			continue
		}
		mem, err := os.Open(dir + "/mem")
		if err != nil {
			last = err
			continue
		}
		for _, l := range strings.Split(string(maps), "\n") {
			f := strings.Fields(l)
			if len(f) < 2 || !strings.HasPrefix(f[1], "r") {
				continue
			}
			lo, hi, _ := strings.Cut(f[0], "-")
			s, _ := strconv.ParseUint(lo, 16, 64)
			e, _ := strconv.ParseUint(hi, 16, 64)
			if e-s > 64<<20 {
				continue
			}
			buf := make([]byte, e-s)
			n, _ := mem.ReadAt(buf, int64(s))
			if bytes.Contains(buf[:n], secret) {
				mem.Close()
				return allowed("read the secret in %s/mem at %s", dir, f[0])
			}
		}
		mem.Close()
		return allowed("opened %s/mem for reading", dir)
	}
	return last
}

// signal-thread PID: find a thread of guardrun's process that accepts a
// signal (signal 0: nothing is sent). SIGKILL to it would end guardrun
// before it restores protected names and writes the audit line.
func attemptSignalThread(a []string) error {
	pid := arg(a, 0)
	ts, err := tasks(pid)
	if err != nil {
		return err
	}
	p, _ := strconv.Atoi(pid)
	var last error = syscall.EPERM
	for _, tid := range ts {
		t, _ := strconv.Atoi(tid)
		if err := unix.Tgkill(p, t, 0); err == nil {
			return allowed("thread %d of guardrun's process %d takes signals from the sandbox", t, p)
		} else {
			last = err
		}
	}
	return last
}

// kill-guardrun PID SIG PROTECTED: write PROTECTED (a protected name
// guardrun restores after the command), then send SIG to every thread of
// guardrun's process, to the process, and to every process it may signal
// (kill(-1), judged on the host). Any of them delivered would end (or stop) guardrun before
// it restores PROTECTED and writes its audit line. A stop is undone at
// once (whoever can stop can continue) so that the test reports instead
// of hanging.
func attemptKillGuardrun(a []string) error {
	pid := arg(a, 0)
	p, err := strconv.Atoi(pid)
	if err != nil {
		return setup("pid %q", pid)
	}
	n, err := strconv.Atoi(arg(a, 1))
	if err != nil {
		return setup("signal %q", arg(a, 1))
	}
	sig := syscall.Signal(n)
	// Refused under bwrap (read-only); under landlock restored after.
	_ = os.WriteFile(arg(a, 2), []byte("written before killing guardrun\n"), 0o644)
	ts, err := tasks(pid)
	if err != nil {
		return err
	}
	undo := func() {
		if sig == syscall.SIGSTOP {
			_ = syscall.Kill(p, syscall.SIGCONT)
		}
	}
	var last error = syscall.EPERM
	for _, tid := range ts {
		t, _ := strconv.Atoi(tid)
		if err := unix.Tgkill(p, t, sig); err == nil {
			undo()
			return allowed("sent signal %d to thread %d of guardrun's process %d", n, t, p)
		} else {
			last = err
		}
	}
	if err := syscall.Kill(p, sig); err == nil {
		undo()
		return allowed("sent signal %d to guardrun's process %d", n, p)
	}
	// kill(-1) succeeds when it reaches any process, its own domain's
	// included (the probe's own exited children): whether it reached
	// guardrun or a host process is checked on the host.
	_ = syscall.Kill(-1, sig)
	return last
}

// prlimit PID: change a resource limit of guardrun's process (to the
// value it has: a write all the same). RLIMIT_NOFILE 0 would keep
// guardrun from restoring anything after the command.
func attemptPrlimit(a []string) error {
	pid, err := strconv.Atoi(arg(a, 0))
	if err != nil {
		return setup("pid %q", arg(a, 0))
	}
	var cur unix.Rlimit
	if err := unix.Prlimit(pid, unix.RLIMIT_CORE, nil, &cur); err != nil {
		return err
	}
	if err := unix.Prlimit(pid, unix.RLIMIT_CORE, &cur, nil); err != nil {
		return err
	}
	return allowed("set RLIMIT_CORE of guardrun's process %d", pid)
}

// sysv-shm KEY: attach the host's SysV shared memory segment KEY and
// write into it.
func attemptSysvShm(a []string) error {
	key, err := strconv.ParseInt(arg(a, 0), 0, 64)
	if err != nil {
		return setup("key %q", arg(a, 0))
	}
	id, err := unix.SysvShmGet(int(key), 0, 0)
	if err != nil {
		return err
	}
	mem, err := unix.SysvShmAttach(id, 0, 0)
	if err != nil {
		return err
	}
	defer unix.SysvShmDetach(mem)
	copy(mem, "written from inside the sandbox")
	return allowed("wrote into the host's shared memory segment %#x", key)
}

// sigio PID: make PID the owner of a socket's I/O signal, with SIGKILL
// as that signal, and make the socket readable: the kernel, not the
// sandbox, would send the signal.
func attemptSigio(a []string) error {
	pid, err := strconv.Atoi(arg(a, 0))
	if err != nil {
		return setup("pid %q", arg(a, 0))
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return setup("socketpair: %v", err)
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	if _, err := unix.FcntlInt(uintptr(fds[0]), unix.F_SETOWN, pid); err != nil {
		return err
	}
	if _, err := unix.FcntlInt(uintptr(fds[0]), unix.F_SETSIG, int(unix.SIGKILL)); err != nil {
		return err
	}
	fl, _ := unix.FcntlInt(uintptr(fds[0]), unix.F_GETFL, 0)
	if _, err := unix.FcntlInt(uintptr(fds[0]), unix.F_SETFL, fl|unix.O_ASYNC); err != nil {
		return err
	}
	unix.Write(fds[1], []byte("x"))
	time.Sleep(300 * time.Millisecond)
	st, err := os.ReadFile("/proc/" + arg(a, 0) + "/stat")
	if err != nil || strings.Contains(string(st), ") Z ") {
		return allowed("SIGIO as SIGKILL ended process %d", pid)
	}
	return fmt.Errorf("the signal did not reach %d: %w", pid, syscall.EPERM)
}

// pidfd-kill PID: SIGKILL through a pidfd.
func attemptPidfdKill(a []string) error {
	pid, err := strconv.Atoi(arg(a, 0))
	if err != nil {
		return setup("pid %q", arg(a, 0))
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0); err != nil {
		return err
	}
	return allowed("sent SIGKILL to %d through a pidfd", pid)
}

// tmpfile-link DIR TARGET: an unnamed file made in DIR (writable), then
// given the name TARGET outside every zone.
func attemptTmpfileLink(a []string) error {
	fd, err := unix.Open(arg(a, 0), unix.O_TMPFILE|unix.O_RDWR|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return setup("O_TMPFILE in %s: %v", arg(a, 0), err)
	}
	defer unix.Close(fd)
	unix.Write(fd, []byte("written from inside the sandbox\n"))
	if err := unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), unix.AT_FDCWD, arg(a, 1), unix.AT_SYMLINK_FOLLOW); err != nil {
		return err
	}
	return allowed("linked an unnamed file to %s", arg(a, 1))
}

// truncate PATH: cut a file to nothing by name.
func attemptTruncate(a []string) error {
	if err := unix.Truncate(arg(a, 0), 0); err != nil {
		return err
	}
	return allowed("truncated %s", arg(a, 0))
}

// pairType is the socketpair type an attempt's argument names: stream,
// seqpacket, or (by default) datagram.
func pairType(s string) int {
	switch s {
	case "stream":
		return unix.SOCK_STREAM
	case "seqpacket":
		return unix.SOCK_SEQPACKET
	}
	return unix.SOCK_DGRAM
}

// bind-abstract NAME [stream|seqpacket]: give one end of a socketpair the host's abstract
// name @NAME (no socket(AF_UNIX) needed), squatting it for host clients.
func attemptBindAbstract(a []string) error {
	fds, err := unix.Socketpair(unix.AF_UNIX, pairType(arg(a, 1))|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err // refused already
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	if err := unix.Bind(fds[0], &unix.SockaddrUnix{Name: "@" + arg(a, 0)}); err != nil {
		return err
	}
	return allowed("bound @%s", arg(a, 0))
}

// bind-path PATH [stream|seqpacket]: the same with a path outside every
// zone.
func attemptBindPath(a []string) error {
	fds, err := unix.Socketpair(unix.AF_UNIX, pairType(arg(a, 1))|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err // refused already
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	if err := unix.Bind(fds[0], &unix.SockaddrUnix{Name: arg(a, 0)}); err != nil {
		return err
	}
	return allowed("bound a socket at %s", arg(a, 0))
}

// proc-root-write PID PATH: write PATH through /proc/PID/root, guardrun's
// view of the file system.
func attemptProcRootWrite(a []string) error {
	p := "/proc/" + arg(a, 0) + "/root" + arg(a, 1)
	fd, err := unix.Open(p, unix.O_WRONLY|unix.O_CREAT|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	unix.Write(fd, []byte("written from inside the sandbox\n"))
	return allowed("wrote %s", p)
}

// proc-mem-write PID: open the memory of a thread of guardrun's process
// for writing.
func attemptProcMemWrite(a []string) error {
	ts, err := tasks(arg(a, 0))
	if err != nil {
		return err
	}
	var last error = syscall.EACCES
	for _, tid := range ts {
		p := "/proc/" + arg(a, 0) + "/task/" + tid + "/mem"
		fd, err := unix.Open(p, unix.O_RDWR|unix.O_CLOEXEC, 0)
		if err == nil {
			unix.Close(fd)
			return allowed("opened %s for writing", p)
		}
		last = err
	}
	return last
}

// inotify DIR: watch a directory outside every zone (which files the
// person opens and writes there).
func attemptInotify(a []string) error {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if _, err := unix.InotifyAddWatch(fd, arg(a, 0), unix.IN_OPEN|unix.IN_MODIFY|unix.IN_CREATE); err != nil {
		return err
	}
	return allowed("watching %s", arg(a, 0))
}

// quarantine-fill PATH: create the missing protected PATH, and take every
// name guardrun would move it aside to (NAME.guardrun-quarantine-TIME
// and -1 to -99) for the next 30 seconds.
func attemptQuarantineFill(a []string) error {
	p := arg(a, 0)
	if err := os.WriteFile(p, []byte("planted from inside the sandbox\n"), 0o644); err != nil {
		return err
	}
	now := time.Now()
	for s := -1; s < 30; s++ {
		t := now.Add(time.Duration(s) * time.Second).UTC().Format("20060102T150405Z")
		for i := 0; i < 100; i++ {
			q := p + ".guardrun-quarantine-" + t
			if i > 0 {
				q += "-" + strconv.Itoa(i)
			}
			if err := os.WriteFile(q, nil, 0o644); err != nil {
				return allowed("created %s (then %v)", p, err)
			}
		}
	}
	return allowed("created %s and every quarantine name for 30 seconds", p)
}

// chmod-dir FILE [MODE]: change the protected FILE, then make its
// directory read-only (MODE, octal, 555 by default; 0: not even
// searchable), so that a restore by the (unprivileged) user cannot put
// a copy next to it, or reach it.
func attemptChmodDir(a []string) error {
	p := arg(a, 0)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString("# appended from inside the sandbox\n")
	f.Close()
	if err != nil {
		return err
	}
	mode := uint64(0o555)
	if m := arg(a, 1); m != "" {
		mode, _ = strconv.ParseUint(m, 8, 32)
	}
	if err := os.Chmod(filepath.Dir(p), os.FileMode(mode)); err != nil {
		return allowed("appended to %s (chmod: %v)", p, err)
	}
	return allowed("appended to %s and made %s mode %o", p, filepath.Dir(p), mode)
}

func init() { attempts["meta"] = attemptMeta }

// meta WAY FILE [ZONE]: change the mode, owner, times or an extended
// attribute of FILE (outside every zone) through a name guardrun's
// seccomp notification handler may judge as inside: WAY is one of
// procfd (O_PATH fd, then /proc/self/fd/N), emptypath (fd opened
// read-only, AT_EMPTY_PATH), dirfd (fd of FILE's directory and the
// base name), cwd (chdir to FILE's directory, /proc/self/cwd/NAME),
// dotdot (ZONE/../.. walk to FILE), fchmodat2 (AT_SYMLINK_NOFOLLOW on
// /proc/self/fd/N), xattr (setxattr on /proc/self/fd/N), hardlink (a
// hard link to FILE in ZONE, then chmod of the link), pathmax (a path
// of PATH_MAX-1 bytes made of ./ ending at FILE).
func attemptMeta(a []string) error {
	way, file := arg(a, 0), arg(a, 1)
	dir, base := filepath.Dir(file), filepath.Base(file)
	try := func(name string, err error) error {
		if err == nil {
			return allowed("%s on %s", name, file)
		}
		return err
	}
	switch way {
	case "procfd":
		fd, err := unix.Open(file, unix.O_PATH, 0)
		if err != nil {
			return err // not even visible (bwrap mounts only the zones)
		}
		p := fmt.Sprintf("/proc/self/fd/%d", fd)
		if err := unix.Chmod(p, 0o777); err == nil {
			return allowed("chmod %s", p)
		}
		if err := unix.Chown(p, 1, 1); err == nil {
			return allowed("chown %s", p)
		}
		return try("utimes", unix.UtimesNano(p, []unix.Timespec{{Sec: 1}, {Sec: 1}}))
	case "emptypath":
		fd, err := unix.Open(file, unix.O_RDONLY, 0)
		if err != nil {
			// Not readable here: an O_PATH fd (fchownat, utimensat
			// and fsetxattr do not take one, fchownat AT_EMPTY_PATH does).
			if fd, err = unix.Open(file, unix.O_PATH, 0); err != nil {
				return err // not even visible (bwrap mounts only the zones)
			}
		}
		if err := unix.Fchmod(fd, 0o777); err == nil {
			return allowed("fchmod")
		}
		if err := unix.Fchownat(fd, "", 1, 1, unix.AT_EMPTY_PATH); err == nil {
			return allowed("fchownat AT_EMPTY_PATH")
		}
		if err := unix.Fsetxattr(fd, "user.pwn", []byte("x"), 0); err == nil {
			return allowed("fsetxattr")
		}
		return try("utimensat AT_EMPTY_PATH", unix.UtimesNanoAt(fd, "", []unix.Timespec{{Sec: 1}, {Sec: 1}}, unix.AT_EMPTY_PATH))
	case "dirfd":
		fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY, 0)
		if err != nil {
			return err // not even visible (bwrap mounts only the zones)
		}
		if err := unix.Fchmodat(fd, base, 0o777, 0); err == nil {
			return allowed("fchmodat dirfd")
		}
		return try("utimensat dirfd", unix.UtimesNanoAt(fd, base, []unix.Timespec{{Sec: 1}, {Sec: 1}}, 0))
	case "cwd":
		if err := os.Chdir(dir); err != nil {
			return err // not even visible (bwrap mounts only the zones)
		}
		if err := unix.Chmod("/proc/self/cwd/"+base, 0o777); err == nil {
			return allowed("chmod via /proc/self/cwd")
		}
		return try("chmod relative", unix.Chmod(base, 0o777))
	case "dotdot":
		zone := arg(a, 2)
		rel, err := filepath.Rel(zone, file)
		if err != nil {
			return setup("%v", err)
		}
		p := zone + "/" + rel // not cleaned: walks up through ..
		return try("chmod "+p, unix.Chmod(p, 0o777))
	case "fchmodat2":
		fd, err := unix.Open(file, unix.O_PATH|unix.O_NOFOLLOW, 0)
		if err != nil {
			return err // not even visible (bwrap mounts only the zones)
		}
		empty := []byte{0}
		_, _, e := unix.Syscall6(unix.SYS_FCHMODAT2, uintptr(fd), uintptr(unsafe.Pointer(&empty[0])), 0o777, unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW, 0, 0)
		if e == 0 {
			return allowed("fchmodat2 AT_EMPTY_PATH|AT_SYMLINK_NOFOLLOW")
		}
		return e
	case "xattr":
		fd, err := unix.Open(file, unix.O_PATH, 0)
		if err != nil {
			return err // not even visible (bwrap mounts only the zones)
		}
		p := fmt.Sprintf("/proc/self/fd/%d", fd)
		return try("setxattr "+p, unix.Setxattr(p, "user.pwn", []byte("x"), 0))
	case "hardlink":
		l := filepath.Join(arg(a, 2), "hl-"+base)
		if err := unix.Link(file, l); err != nil {
			return err
		}
		defer os.Remove(l)
		return try("chmod of a hard link "+l, unix.Chmod(l, 0o777))
	case "pathmax":
		p := file
		for len(p)+2 < unix.PathMax-1 {
			p = "/." + p
		}
		for len(p) < unix.PathMax-1 {
			p = "/" + p
		}
		return try(fmt.Sprintf("chmod of a %d-byte path", len(p)), unix.Chmod(p, 0o777))
	case "symlink":
		// Links made in ZONE: to FILE's directory and to FILE; the call
		// goes through the first, walks .. after it, or names the
		// second without following it (lchown, utimensat NOFOLLOW).
		zone := arg(a, 2)
		dl, fl := filepath.Join(zone, "meta-dir-link"), filepath.Join(zone, "meta-file-link")
		if err := os.Symlink(dir, dl); err != nil {
			return setup("symlink: %v", err)
		}
		defer os.Remove(dl)
		if err := os.Symlink(file, fl); err != nil {
			return setup("symlink: %v", err)
		}
		defer os.Remove(fl)
		if err := unix.Chmod(dl+"/"+base, 0o777); err == nil {
			return allowed("chmod through a link to the directory")
		}
		if err := unix.Chmod(dl+"/../"+filepath.Base(dir)+"/"+base, 0o777); err == nil {
			return allowed("chmod through .. after a link")
		}
		if err := unix.Chmod(dl+"/", 0o777); err == nil {
			return allowed("chmod of a link to a directory with a trailing slash")
		}
		if err := unix.Lchown(fl, os.Getuid(), os.Getgid()); err != nil {
			return fmt.Errorf("lchown of the link: %w", err)
		}
		if err := unix.UtimesNanoAt(unix.AT_FDCWD, fl, []unix.Timespec{{Sec: 1}, {Sec: 1}}, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return fmt.Errorf("utimensat NOFOLLOW of the link: %w", err)
		}
		// The links themselves changed (the host checks FILE): try the
		// followed forms last.
		return try("chmod through a link to the file", unix.Chmod(fl, 0o777))
	case "procroot":
		// Through another process's root and cwd: PID's (guardrun's).
		pid := arg(a, 2)
		if err := unix.Chmod("/proc/"+pid+"/root"+file, 0o777); err == nil {
			return allowed("chmod through /proc/%s/root", pid)
		}
		return try("chmod through /proc/1/root", unix.Chmod("/proc/1/root"+file, 0o777))
	case "badaddr":
		// Paths guardrun must read from the command's memory: unmapped,
		// and a name running into an unmapped page. It must answer
		// EFAULT and keep serving (then a real outside path).
		page := os.Getpagesize()
		mem, err := unix.Mmap(-1, 0, 2*page, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err != nil {
			return setup("mmap: %v", err)
		}
		for i := range mem[:page] {
			mem[i] = 'a'
		}
		if _, _, e := unix.Syscall(unix.SYS_MUNMAP, uintptr(unsafe.Pointer(&mem[page])), uintptr(page), 0); e != 0 {
			return setup("munmap: %v", e)
		}
		cwd := unix.AT_FDCWD
		atFDCWD := uintptr(cwd)
		for _, addr := range []uintptr{1, uintptr(unsafe.Pointer(&mem[0])), uintptr(unsafe.Pointer(&mem[page-1]))} {
			if _, _, e := unix.Syscall(unix.SYS_FCHMODAT, atFDCWD, addr, 0o777); e == 0 {
				return allowed("chmod of a path at %#x succeeded", addr)
			}
		}
		return try("chmod after bad addresses", unix.Chmod(file, 0o777))
	case "race":
		// A name in ZONE flipped between a zone file and a link to FILE
		// while chmod, utimensat and setxattr run on it: guardrun must
		// judge and change the same object.
		zone := arg(a, 2)
		var before unix.Stat_t
		if err := unix.Stat(file, &before); err != nil {
			return err
		}
		name, own, tmp := filepath.Join(zone, "meta-race"), filepath.Join(zone, "meta-race-own"), filepath.Join(zone, "meta-race-tmp")
		if err := os.WriteFile(own, nil, 0o644); err != nil {
			return setup("%v", err)
		}
		defer os.Remove(own)
		defer os.Remove(name)
		stop := flipLink(name, tmp, file, own)
		for i := 0; i < 3000; i++ {
			unix.Chmod(name, 0o777)
			unix.UtimesNano(name, []unix.Timespec{{Sec: 1}, {Sec: 1}})
			unix.Setxattr(name, "user.pwn", []byte("x"), 0)
		}
		stop()
		os.Remove(tmp)
		var now unix.Stat_t
		if err := unix.Stat(file, &now); err != nil {
			return err
		}
		if now.Mode != before.Mode || now.Mtim != before.Mtim {
			return allowed("%s changed through a flipped name: mode %o mtime %v", file, now.Mode, now.Mtim)
		}
		return syscall.EACCES
	case "path":
		// FILE as another name reaches it (arg 2): chmod, utimes and
		// setxattr on that name.
		p := arg(a, 2)
		if err := unix.Chmod(p, 0o777); err == nil {
			return allowed("chmod %s", p)
		}
		if err := unix.UtimesNano(p, []unix.Timespec{{Sec: 1}, {Sec: 1}}); err == nil {
			return allowed("utimes %s", p)
		}
		return try("setxattr "+p, unix.Setxattr(p, "user.pwn", []byte("x"), 0))
	case "pathmax-exact":
		p := file
		for len(p)+2 <= unix.PathMax {
			p = "/." + p
		}
		for len(p) < unix.PathMax {
			p = "/" + p
		}
		return try(fmt.Sprintf("chmod of a %d-byte path", len(p)), unix.Chmod(p, 0o777))
	}
	return setup("unknown way %q", way)
}

func init() { attempts["nest-signal"] = attemptNestSignal }

// nest-signal EXE PID: go through guardrun's trampoline again from
// inside (EXE, guardrun's own executable, which the command may run,
// with the marker argv[1]) to reach a process that signals a thread of
// guardrun's process PID: once, twice nested, and with odd arguments
// (an empty PATH, a relative PATH). Any ALLOWED in a child is an escape.
func attemptNestSignal(a []string) error {
	exe, pid := arg(a, 0), arg(a, 1)
	const marker = "\x01guardrun-landlock-nest"
	self, err := os.Executable()
	if err != nil {
		return setup("%v", err)
	}
	variants := [][]string{
		{"guardrun", marker, self, "probe", "signal-thread", pid},
		{"guardrun", marker, exe, "guardrun", marker, self, "probe", "signal-thread", pid},
		{"guardrun", marker, "", "probe", "signal-thread", pid},
		{"guardrun", marker, "probe", "probe", "signal-thread", pid},
		{"guardrun", marker, self, "probe", "kill-guardrun", pid, "0"},
	}
	var last error = syscall.EPERM
	for _, v := range variants {
		c := exec.Command(exe)
		c.Args = v
		c.Dir = filepath.Dir(self)
		out, err := c.CombinedOutput()
		fmt.Fprintf(os.Stderr, "trampoline %q: %v: %s\n", v[2:], err, bytes.TrimSpace(out))
		if strings.Contains(string(out), " ALLOWED") {
			return allowed("through the trampoline %q: %s", v[2:], strings.TrimSpace(string(out)))
		}
		if err == nil && !strings.Contains(string(out), "refused") {
			return allowed("the trampoline %q exited 0 without a refusal: %s", v[2:], out)
		}
		last = fmt.Errorf("%q: %v: %s", v[2:], err, bytes.TrimSpace(out))
		if r := strings.Index(string(out), "refused errno="); r >= 0 {
			last = syscall.EPERM
		}
	}
	return last
}

func init() { attempts["make-odd"] = attemptMakeOdd }

// make-odd KIND PATH [TARGET]: put at PATH (a name guardrun moves aside
// after the command) a symbolic link to TARGET, a directory with a file
// in it, a fifo, or an empty sticky read-only directory (a fake bwrap
// placeholder, which no bwrap run holds; placeholder-full: with a file), so that the move acts on something else or fails.
func attemptMakeOdd(a []string) error {
	kind, path := arg(a, 0), arg(a, 1)
	var err error
	switch kind {
	case "symlink":
		err = os.Symlink(arg(a, 2), path)
	case "dir":
		if err = os.Mkdir(path, 0o755); err == nil {
			err = os.WriteFile(filepath.Join(path, "x"), []byte("x\n"), 0o644)
		}
	case "fifo":
		err = unix.Mkfifo(path, 0o644)
	case "placeholder":
		// What the bwrap backend makes for a missing name while its
		// command runs: an empty sticky read-only directory.
		if err = os.Mkdir(path, 0o755); err == nil {
			err = os.Chmod(path, 0o555|os.ModeSticky)
		}
	case "placeholder-full":
		// The same look, with a file in it.
		if err = os.Mkdir(path, 0o755); err == nil {
			if err = os.WriteFile(filepath.Join(path, "settings.json"), []byte("{}\n"), 0o644); err == nil {
				err = os.Chmod(path, 0o555|os.ModeSticky)
			}
		}
	default:
		return setup("unknown kind %q", kind)
	}
	if err != nil {
		return err
	}
	return allowed("made a %s at %s", kind, path)
}

// flipLink replaces name, in a loop until the returned stop is called,
// by a symbolic link to a, then to b, and so on (made at tmp, renamed
// over name): a name that changes between a check and a use.
func flipLink(name, tmp, a, b string) (stop func()) {
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-quit:
				return
			default:
			}
			os.Remove(tmp)
			if i%2 == 0 {
				os.Symlink(a, tmp)
			} else {
				os.Symlink(b, tmp)
			}
			os.Rename(tmp, name)
		}
	}()
	return func() { close(quit); <-done }
}

func init() { attempts["tmp-odd"] = attemptTmpOdd }

// tmp-odd OUTSIDE FILE MARKER: leave in the command's temporary
// directory, under MARKER, what its removal after the command might
// follow or change: links to the directory OUTSIDE (at the top, and
// inside directories made mode 0), a hard link to FILE (a file in a
// writable zone, if the sandbox lets it be linked there), and mode-0
// directories within mode-0 directories. Then change OUTSIDE's mode
// through the link (the sandbox must refuse it: that is the result).
func attemptTmpOdd(a []string) error {
	outside, file, marker := arg(a, 0), arg(a, 1), arg(a, 2)
	base := filepath.Join(os.TempDir(), marker)
	if err := os.MkdirAll(filepath.Join(base, "d/e"), 0o755); err != nil {
		return setup("%v", err)
	}
	for _, l := range []string{base + "-link", filepath.Join(base, "out"), filepath.Join(base, "d/up"), filepath.Join(base, "d/e/up")} {
		if err := os.Symlink(outside, l); err != nil {
			return setup("%v", err)
		}
	}
	if err := os.Link(file, filepath.Join(base, "hard")); err != nil {
		fmt.Fprintf(os.Stderr, "hard link to %s: %v\n", file, err)
	}
	for _, d := range []string{filepath.Join(base, "d/e"), filepath.Join(base, "d"), base} {
		if err := os.Chmod(d, 0); err != nil {
			return setup("%v", err)
		}
	}
	if err := os.Chmod(base+"-link", 0o700); err != nil {
		return err
	}
	return allowed("changed %s's mode through a link in $TMPDIR", outside)
}

func init() { attempts["devmeta"] = attemptDevMeta }

// devmeta NODE: change the mode, times and owner of the device node NODE
// (/dev/null, ...) by its name and through a descriptor opened for
// writing, putting back nothing. Every call that worked is named; the
// test checks the host's node, which must not have changed whatever
// happened inside.
func attemptDevMeta(a []string) error {
	p := arg(a, 0)
	var done []string
	var last error
	note := func(name string, err error) {
		if err == nil {
			done = append(done, name)
		} else {
			last = err
		}
	}
	note("chmod 000", unix.Chmod(p, 0))
	note("utimensat 2001", unix.UtimesNano(p, []unix.Timespec{{Sec: 978307200}, {Sec: 978307200}}))
	note("chown", unix.Lchown(p, os.Getuid(), os.Getgid()))
	if fd, err := unix.Open(p, unix.O_WRONLY|unix.O_CLOEXEC, 0); err == nil {
		note("fchmod 000", unix.Fchmod(fd, 0))
		note("futimens 2001", unix.UtimesNanoAt(fd, "", []unix.Timespec{{Sec: 978307200}, {Sec: 978307200}}, unix.AT_EMPTY_PATH))
		unix.Close(fd)
	} else {
		last = err
	}
	if len(done) > 0 {
		return allowed("%s on %s", strings.Join(done, ", "), p)
	}
	return last
}

func init() { attempts["devstdio"] = attemptDevStdio }

// devstdio [FD...]: for each of the descriptors FD (0, 1 and 2 when none
// is named) that is a device node, change its mode, owner and times to
// what they are (the change time moves, nothing else: the host's node
// keeps working whatever happened) through the descriptor and through
// its /proc/self/fd link, and set an ACL on it (aclRW). Every call that worked is named; the test checks the host's node.
func attemptDevStdio(a []string) error {
	var done []string
	var last error = unix.ENOENT
	fds := []int{0, 1, 2}
	if len(a) > 0 {
		fds = nil
		for _, s := range a {
			fd, err := strconv.Atoi(s)
			if err != nil {
				return setup("descriptor %q", s)
			}
			fds = append(fds, fd)
		}
	}
	for _, fd := range fds {
		var st unix.Stat_t
		if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR {
			continue
		}
		mode := st.Mode & 0o7777
		link := fmt.Sprintf("/proc/self/fd/%d", fd)
		for _, c := range []struct {
			name string
			err  error
		}{
			{fmt.Sprintf("fchmod %d", fd), unix.Fchmod(fd, mode)},
			{fmt.Sprintf("fchown %d", fd), unix.Fchown(fd, int(st.Uid), int(st.Gid))},
			{"chmod " + link, unix.Chmod(link, mode)},
			{fmt.Sprintf("utimensat(AT_EMPTY_PATH) %d", fd), unix.UtimesNanoAt(fd, "", []unix.Timespec{st.Atim, st.Mtim}, unix.AT_EMPTY_PATH)},
			{fmt.Sprintf("fsetxattr %d system.posix_acl_access", fd), unix.Fsetxattr(fd, "system.posix_acl_access", aclRW(), 0)},
		} {
			if c.err == nil {
				done = append(done, c.name)
			} else {
				last = c.err
			}
		}
	}
	if len(done) > 0 {
		return allowed("%s", strings.Join(done, ", "))
	}
	return last
}

func init() {
	attempts["devtouch"] = attemptDevTouch
	attempts["devunmount"] = attemptDevUnmount
}

// devtouch PATH: change the mode, owner and times of PATH to what they
// are, by its name (following links: /dev/ptmx, /proc/1/root/...), so
// that the change time moves and nothing else does. Every call that
// worked is named.
func attemptDevTouch(a []string) error {
	p := arg(a, 0)
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		return err
	}
	var done []string
	var last error
	for _, c := range []struct {
		name string
		err  error
	}{
		{"chmod", unix.Chmod(p, st.Mode&0o7777)},
		{"chown", unix.Chown(p, int(st.Uid), int(st.Gid))},
		{"utimensat", unix.UtimesNano(p, []unix.Timespec{st.Atim, st.Mtim})},
	} {
		if c.err == nil {
			done = append(done, c.name)
		} else {
			last = c.err
		}
	}
	if len(done) > 0 {
		return allowed("%s on %s", strings.Join(done, ", "), p)
	}
	return last
}

// devunmount PATH: take the mount at PATH (a copy bound over bwrap's
// bind of the host's node) away, then devtouch what is left there.
func attemptDevUnmount(a []string) error {
	if err := unix.Unmount(arg(a, 0), unix.MNT_DETACH); err != nil {
		return err
	}
	err := attemptDevTouch(a)
	var al allowedError
	if errors.As(err, &al) {
		return allowed("unmounted %s; %s", arg(a, 0), al.detail)
	}
	return allowed("unmounted %s; %v", arg(a, 0), err)
}

func init() { attempts["setacl"] = attemptSetACL }

// aclRW is a POSIX access ACL (system.posix_acl_access) that names the
// probe's own user (the one id its user namespace surely maps) with read
// and write beside the owner, group and others: an extended ACL, which
// the kernel keeps as an attribute.
func aclRW() []byte {
	b := []byte{2, 0, 0, 0} // version 2
	for _, e := range []struct {
		tag, perm uint16
		id        uint32
	}{{0x01, 6, 0xffffffff}, {0x02, 6, uint32(os.Getuid())}, {0x04, 6, 0xffffffff}, {0x10, 6, 0xffffffff}, {0x20, 6, 0xffffffff}} {
		b = append(b, byte(e.tag), byte(e.tag>>8), byte(e.perm), byte(e.perm>>8),
			byte(e.id), byte(e.id>>8), byte(e.id>>16), byte(e.id>>24))
	}
	return b
}

// setacl PATH: set an extended POSIX ACL on PATH (aclRW).
func attemptSetACL(a []string) error {
	if err := unix.Setxattr(arg(a, 0), "system.posix_acl_access", aclRW(), 0); err != nil {
		return err
	}
	return allowed("set an ACL on %s", arg(a, 0))
}

func init() { attempts["opath-meta"] = attemptOpathMeta }

// opath-meta PATH: open PATH with O_PATH (which neither a nodev mount
// nor a denied read stops) and change its mode, owner and times to what
// they are through that descriptor: fchmodat2 and fchownat with
// AT_EMPTY_PATH, utimensat on it, and chmod of its /proc/self/fd link.
// Every call that worked is named.
func attemptOpathMeta(a []string) error {
	p := arg(a, 0)
	fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return setup("fstat %s: %v", p, err)
	}
	mode := st.Mode & 0o7777
	empty, _ := unix.BytePtrFromString("")
	_, _, e := unix.Syscall6(unix.SYS_FCHMODAT2, uintptr(fd), uintptr(unsafe.Pointer(empty)), uintptr(mode), unix.AT_EMPTY_PATH, 0, 0)
	var chmod2 error
	if e != 0 {
		chmod2 = e
	}
	link := fmt.Sprintf("/proc/self/fd/%d", fd)
	var done []string
	var last error
	for _, c := range []struct {
		name string
		err  error
	}{
		{"fchmodat2(AT_EMPTY_PATH)", chmod2},
		{"fchownat(AT_EMPTY_PATH)", unix.Fchownat(fd, "", int(st.Uid), int(st.Gid), unix.AT_EMPTY_PATH)},
		{"utimensat(AT_EMPTY_PATH)", unix.UtimesNanoAt(fd, "", []unix.Timespec{st.Atim, st.Mtim}, unix.AT_EMPTY_PATH)},
		{"chmod " + link, unix.Chmod(link, mode)},
		{"setxattr " + link, unix.Setxattr(link, "system.posix_acl_access", aclRW(), 0)},
	} {
		if c.err == nil {
			done = append(done, c.name)
		} else {
			last = c.err
		}
	}
	if len(done) > 0 {
		return allowed("%s on %s", strings.Join(done, ", "), p)
	}
	return last
}
