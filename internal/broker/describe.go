package broker

import (
	"os"
	"strconv"
	"strings"

	"github.com/guardrun/guardrun/approval"
)

// describe names the process that connected: its pid from the kernel
// and, where /proc shows it, its argv, sanitized and cut to one line. A
// process can rewrite its own argv, so this says who connected, not
// what will run.
func describe(pid int) string {
	if pid <= 0 {
		return "a process of yours (the system does not say which)"
	}
	s := "pid " + strconv.Itoa(pid)
	if data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); err == nil {
		args := strings.Split(strings.TrimRight(string(data), "\x00"), "\x00")
		for i, a := range args {
			if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`;&|<>()*?[]{}!#~") {
				args[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
			}
		}
		s += ": " + approval.Sanitize(strings.ReplaceAll(strings.Join(args, " "), "\n", " "))
	}
	if r := []rune(s); len(r) > 300 {
		s = string(r[:299]) + "…"
	}
	return s
}
