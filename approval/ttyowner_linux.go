package approval

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// terminalOwner finds who holds the master of the controlling terminal
// from /proc, without touching the terminal: the terminal is
// /dev/pts/N (from this process's stat), and a master is an open
// /dev/ptmx (or /dev/pts/ptmx) whose fdinfo says tty-index: N, of the
// same devpts instance. The ancestors are looked at first (the holder is
// nearly always one: the emulator, sshd, the tmux server, the program
// that made the terminal), then every process this user can read.
//
// The terminal is a person's when every holder found runs on no
// terminal of its own and is not guardrun (a supervisor's pty is its
// agent's); it is not when a holder runs on one, when no holder can be
// found (another user's process, another pid namespace) or when /proc
// cannot be read: failing closed. A terminal that is no pty (a console,
// a serial line) is a person's.
func terminalOwner(*os.File) TerminalOwner {
	self, err := readPidStat(os.Getpid())
	if err != nil {
		return unknownOwner("/proc cannot be read: " + err.Error())
	}
	nr := uint64(uint32(self.ttyNr))
	major, minor := unix.Major(nr), unix.Minor(nr)
	switch {
	case self.ttyNr == 0:
		return unknownOwner("this process has no controlling terminal")
	case major == 3:
		return unknownOwner("it is a BSD-style pty, whose holder cannot be found")
	case major < 136 || major > 143:
		return TerminalOwner{Person: true}
	}
	index := uint64(major-136)<<20 | uint64(minor)
	tty := fmt.Sprintf("/dev/pts/%d", index)
	var pst unix.Stat_t
	if err := unix.Stat(tty, &pst); err != nil || unix.Major(pst.Rdev) != major || unix.Minor(pst.Rdev) != minor {
		return unknownOwner(tty + " is not this process's terminal in this /dev/pts")
	}
	sc := &ptyScan{index: index, dev: pst.Dev, self: os.Getpid(), mntNS: nsOf("self")}
	if fi, err := os.Stat("/proc/self/exe"); err == nil {
		sc.exe = fi
	}
	// Ancestors first, nearest first.
	seen := map[int]bool{sc.self: true}
	var holders []holder
	// hidden is the nearest ancestor whose open files this user cannot
	// read (sshd's session process makes itself undumpable).
	hidden, hiddenStat := 0, pidStat{}
	for pid := self.ppid; pid > 0 && !seen[pid]; {
		seen[pid] = true
		before := sc.unreadable
		holders = append(holders, sc.holds(pid)...)
		st, err := readPidStat(pid)
		if err != nil {
			break
		}
		if sc.unreadable > before && hidden == 0 {
			hidden, hiddenStat = pid, st
		}
		pid = st.ppid
	}
	if len(holders) == 0 {
		entries, err := os.ReadDir("/proc")
		if err != nil {
			return unknownOwner("/proc cannot be read: " + err.Error())
		}
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || seen[pid] {
				continue
			}
			holders = append(holders, sc.holds(pid)...)
		}
	}
	for _, h := range holders {
		switch {
		case h.guardrun:
			return TerminalOwner{PID: h.pid, Name: h.name, Why: fmt.Sprintf(
				"the terminal %s is the pty guardrun (pid %d) runs an agent in, not a person's", tty, h.pid)}
		case h.ctty:
			return ownedBy(h.pid, h.name, tty)
		}
	}
	for _, h := range holders {
		if h.exact {
			return TerminalOwner{Person: true, PID: h.pid, Name: h.name}
		}
	}
	// sshd's session process holds the master of the terminal it gives a
	// login, and is undumpable, so an unprivileged user cannot see its
	// open files: the terminal is taken for a person's when the nearest
	// ancestor that hides its files is sshd running on no terminal of its
	// own (what an agent that made a pty is not: it runs on the person's).
	if len(holders) == 0 && hidden != 0 && hiddenStat.ttyNr == 0 && isSSHD(hiddenStat.comm) {
		return TerminalOwner{Person: true, PID: hidden, Name: hiddenStat.comm}
	}
	why := "no process this user can read holds the other side of " + tty
	if sc.unreadable > 0 {
		why += fmt.Sprintf(" (%d processes could not be read)", sc.unreadable)
	}
	return unknownOwner(why)
}

// isSSHD reports whether comm is the name OpenSSH's session process
// runs under (sshd; sshd-session since OpenSSH 9.8).
func isSSHD(comm string) bool { return comm == "sshd" || comm == "sshd-session" }

// ptyScan looks for the masters of pty index (of the devpts instance
// dev) in processes' open files.
type ptyScan struct {
	index      uint64
	dev        uint64
	self       int
	mntNS      string
	exe        os.FileInfo
	unreadable int
}

// holder is a process that holds the master. exact is set when the
// master is surely of this devpts instance; a /dev/ptmx opened in
// another mount namespace may be another instance's, and counts only
// against the terminal.
type holder struct {
	pid            int
	name           string
	ctty, guardrun bool
	exact          bool
}

// holds returns pid as a holder, once, if it has the master open.
func (sc *ptyScan) holds(pid int) []holder {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(dir)
	if err != nil {
		if !os.IsNotExist(err) {
			sc.unreadable++
		}
		return nil
	}
	found, exact := false, false
	for _, fd := range fds {
		p := dir + "/" + fd.Name()
		link, err := os.Readlink(p)
		if err != nil || link != "/dev/ptmx" && !strings.HasSuffix(link, "/pts/ptmx") {
			continue
		}
		if n, ok := ttyIndex(fmt.Sprintf("/proc/%d/fdinfo/%s", pid, fd.Name())); !ok || n != sc.index {
			continue
		}
		var st unix.Stat_t
		if err := unix.Stat(p, &st); err != nil {
			continue
		}
		found = true
		// Opened as pts/ptmx: the instance is the file system's. As
		// /dev/ptmx: the instance at /dev/pts of the opener's mount
		// namespace.
		if st.Dev == sc.dev || nsOf(strconv.Itoa(pid)) == sc.mntNS && sc.mntNS != "" {
			exact = true
		}
	}
	if !found {
		return nil
	}
	st, err := readPidStat(pid)
	if err != nil {
		return nil
	}
	h := holder{pid: pid, name: st.comm, ctty: st.ttyNr != 0, exact: exact}
	if sc.exe != nil {
		if fi, err := os.Stat(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && os.SameFile(fi, sc.exe) {
			h.guardrun = true
		}
	}
	return []holder{h}
}

// ttyIndex reads the tty-index line of a pty master's fdinfo.
func ttyIndex(path string) (uint64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "tty-index:"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

func nsOf(pid string) string {
	s, _ := os.Readlink("/proc/" + pid + "/ns/mnt")
	return s
}

// pidStat is what the owner search reads of /proc/PID/stat.
type pidStat struct {
	comm  string
	ppid  int
	ttyNr int64
}

func readPidStat(pid int) (pidStat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return pidStat{}, err
	}
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return pidStat{}, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	// After "(comm)": state ppid pgrp session tty_nr ...
	f := strings.Fields(s[end+1:])
	if len(f) < 5 {
		return pidStat{}, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	ppid, err1 := strconv.Atoi(f[1])
	tty, err2 := strconv.ParseInt(f[4], 10, 64)
	if err1 != nil || err2 != nil {
		return pidStat{}, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	return pidStat{comm: s[open+1 : end], ppid: ppid, ttyNr: tty}, nil
}
