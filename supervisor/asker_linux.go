package supervisor

import (
	"os"
	"strconv"
	"strings"

	"github.com/guardrun/guardrun/approval"
)

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

// peerArgv is the argv /proc shows for pid, for a request relayed to
// the person's broker; nil when unreadable.
func peerArgv(pid int) []string {
	if pid <= 0 {
		return nil
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimRight(string(data), "\x00"), "\x00")
}
