package supervisor

import (
	"net"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/guardrun/guardrun/approval"
)

// peerAllowed admits only processes of the supervisor's own user. The
// socket's 0700 directory already keeps others out; the kernel's record of
// who connected (SO_PEERCRED) holds even if the directory's mode is
// loosened later. It also returns the peer's pid, which the prompt names.
func peerAllowed(c *net.UnixConn) (pid int, ok bool) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, false
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil || cerr != nil {
		return 0, false
	}
	return int(cred.Pid), int(cred.Uid) == os.Getuid()
}

// describePeer names the process that asked: its pid from the kernel and
// its argv from /proc, sanitized and cut to one screen line. A process
// can rewrite its own argv, so this says who connected, not what will
// run; the request below it says that.
func describePeer(pid int) string {
	if pid <= 0 {
		return ""
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	argv := "(argv unreadable)"
	if err == nil {
		args := strings.Split(strings.TrimRight(string(data), "\x00"), "\x00")
		for i, a := range args {
			if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`;&|<>()*?[]{}!#~") {
				args[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
			}
		}
		argv = strings.Join(args, " ")
	}
	s := "asked by pid " + strconv.Itoa(pid) + ": " + approval.Sanitize(strings.ReplaceAll(argv, "\n", " "))
	if r := []rune(s); len(r) > 200 {
		s = string(r[:199]) + "…"
	}
	return s
}
