package bashoracle

import (
	"bufio"
	"encoding/hex"
	"io"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// Exec is one program the traced shell started.
type Exec struct {
	Pid  int
	Path string
	Argv []string
	// By is the program that ran it (the image of the calling process).
	By string
}

// Write is one file a process opened for writing, created, renamed or
// removed.
type Write struct {
	Pid  int
	Path string // absolute, resolved against the process's directory
	Call string
	By   string
}

// Trace is what one run did, from the moment the traced shell started.
type Trace struct {
	Execs  []Exec
	Writes []Write
	// Started is set when the shell's own execve was seen: the trace
	// covers the script.
	Started bool
}

var (
	lineRE = regexp.MustCompile(`^(\d+) +(.*)$`)
	// With --pidns-translation a clone in the sandbox's pid namespace
	// reads "= 3 /* 24089 in strace's PID NS */".
	callRE  = regexp.MustCompile(`^([a-z0-9_]+)\((.*)\) += (-?\d+|\?)(?: /\* (\d+) in strace's PID NS \*/)?`)
	hexStr  = regexp.MustCompile(`"((?:\\x[0-9a-f]{2})*)"`)
	resumed = regexp.MustCompile(`^<\.\.\. ([a-z0-9_]+) resumed>(.*)$`)
)

// unhex decodes a string strace printed with -xx.
func unhex(s string) string {
	b, err := hex.DecodeString(strings.ReplaceAll(s, `\x`, ""))
	if err != nil {
		return s
	}
	return string(b)
}

// proc is one traced process: the program it runs (its own after
// execve, its parent's before) and its directory.
type proc struct {
	image   string // its own program, once it has called execve
	execd   bool
	inherit string // the program of the parent at the fork
	cwd     string
}

func (p *proc) program() string {
	if p.execd {
		return p.image
	}
	return p.inherit
}

// parseTrace reads `strace -f -xx` output. shellPath is the program the
// sandbox runs; everything before its execve is the sandbox being set up.
func parseTrace(r io.Reader, shellPath, cwd string) *Trace {
	t := &Trace{}
	// A child's first system calls can be printed before its parent's
	// clone returns, so a first pass finds every process's parent and the
	// second starts each process from its parent's state when it is first
	// seen.
	var lines []string
	parent := map[int]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	calls := joinCalls(lines)
	for _, c := range calls {
		switch c.name {
		case "clone", "clone3", "fork", "vfork":
			if n, err := strconv.Atoi(c.ret); err == nil && n > 0 {
				parent[n] = c.pid
			}
		}
	}
	procs := map[int]*proc{}
	get := func(pid int) *proc {
		p := procs[pid]
		if p == nil {
			p = &proc{inherit: "bwrap", cwd: cwd}
			if pp := procs[parent[pid]]; pp != nil {
				p.inherit, p.cwd = pp.program(), pp.cwd
			}
			procs[pid] = p
		}
		return p
	}
	for _, c := range calls {
		pid, call, args, ret := c.pid, c.name, c.args, c.ret
		ok := ret != "?" && !strings.HasPrefix(ret, "-")
		p := get(pid)
		switch call {
		case "clone", "clone3", "fork", "vfork":
			if n, err := strconv.Atoi(ret); err == nil && n > 0 {
				get(n) // the child starts from this state, if not seen yet
			}
		case "execve", "execveat":
			if !ok {
				continue
			}
			strs := hexStr.FindAllStringSubmatch(args, -1)
			if len(strs) == 0 {
				continue
			}
			file := unhex(strs[0][1])
			var argv []string
			// The argv array follows the path; the environment is not
			// printed as strings without -v.
			if i := strings.Index(args, "["); i >= 0 {
				if j := strings.Index(args[i:], "]"); j >= 0 {
					for _, s := range hexStr.FindAllStringSubmatch(args[i:i+j], -1) {
						argv = append(argv, unhex(s[1]))
					}
				}
			}
			if !t.Started {
				p.image, p.execd = path.Base(file), true
				if file == shellPath || path.Base(file) == path.Base(shellPath) {
					t.Started = true
				}
				continue
			}
			t.Execs = append(t.Execs, Exec{Pid: pid, Path: file, Argv: argv, By: p.program()})
			p.image, p.execd = path.Base(file), true
		case "chdir":
			if ok {
				if strs := hexStr.FindAllStringSubmatch(args, 1); len(strs) > 0 {
					p.cwd = abs(p.cwd, unhex(strs[0][1]))
				}
			}
		case "openat", "open", "creat":
			if !ok || !t.Started {
				continue
			}
			if (call == "openat" || call == "open") && !strings.Contains(args, "O_WRONLY") && !strings.Contains(args, "O_RDWR") && !strings.Contains(args, "O_CREAT") {
				continue
			}
			if strs := hexStr.FindAllStringSubmatch(args, 1); len(strs) > 0 {
				t.Writes = append(t.Writes, Write{Pid: pid, Path: abs(p.cwd, unhex(strs[0][1])), Call: call, By: p.program()})
			}
		case "unlink", "unlinkat", "rename", "renameat", "renameat2", "mkdir", "mkdirat", "truncate", "link", "linkat", "symlink", "symlinkat":
			if !ok || !t.Started {
				continue
			}
			for _, s := range hexStr.FindAllStringSubmatch(args, -1) {
				t.Writes = append(t.Writes, Write{Pid: pid, Path: abs(p.cwd, unhex(s[1])), Call: call, By: p.program()})
			}
		}
	}
	return t
}

func abs(cwd, p string) string {
	if strings.HasPrefix(p, "/") {
		return path.Clean(p)
	}
	return path.Join(cwd, p)
}

// call is one system call of a trace, with an interrupted call
// ("<unfinished ...>" then "<... NAME resumed>") joined back together.
type call struct {
	pid             int
	name, args, ret string
}

// joinCalls parses strace's lines into calls, in the order they returned.
func joinCalls(lines []string) []call {
	var out []call
	pending := map[int]string{}
	for _, l := range lines {
		m := lineRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		pid, _ := strconv.Atoi(m[1])
		rest := m[2]
		if strings.HasSuffix(rest, "<unfinished ...>") {
			pending[pid] = strings.TrimSuffix(rest, " <unfinished ...>")
			continue
		}
		if rm := resumed.FindStringSubmatch(rest); rm != nil {
			rest = pending[pid] + rm[2]
			delete(pending, pid)
		}
		cm := callRE.FindStringSubmatch(rest)
		if cm == nil {
			continue
		}
		ret := cm[3]
		if cm[4] != "" {
			ret = cm[4]
		}
		out = append(out, call{pid: pid, name: cm[1], args: cm[2], ret: ret})
	}
	return out
}
