//go:build linux

package runner

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// attack is an escape row of TestEscapesAtGuardrun: an escape, and, when the
// landlock backend does not hold against it yet, why (the row is then
// skipped under landlock, and still made under bwrap).
type attack struct {
	escape
	gapLL string
	// after checks the output of a refused attempt.
	after func(t *testing.T, out string)
	// movedAfter: allowed inside under every backend, and moved aside
	// after the command (restored names it).
	movedAfter bool
	// onlyLL: the row aims at what only the landlock backend has (its
	// keeper); skipped under bwrap, saying why.
	onlyLL string
	// schedLimits: the row runs with guardrun's (this process's)
	// RLIMIT_RTPRIO and RLIMIT_NICE raised where the test may raise them
	// (CAP_SYS_RESOURCE); both backends must lower them for the command.
	schedLimits bool
	// stdin, if set, is the command's standard input.
	stdin func(t *testing.T) *os.File
	// skip, if set, is why this environment cannot set the row up
	// (skipped under every backend).
	skip string
	// network runs the row with the network on (sandbox.network: true),
	// where the command shares the host's network namespace.
	network bool
}

// noKeeper is why the keeper's rows do not run under bwrap: there the
// command's parent is bwrap's init, in the sandbox's pid namespace.
const noKeeper = "no keeper under bwrap: the command's parent is bwrap's init inside the sandbox's pid namespace"

// TestEscapesAtGuardrun makes attempts on what TestEscapes does not reach: guardrun
// itself, seen from inside (its memory, its threads, its resource
// limits, its restore of protected names after the command), and what
// a backend without namespaces shares with the host (SysV IPC, inotify,
// SIGIO, abstract names). Each runs in the probe, which first proves it
// is inside the sandbox; each is checked on the host afterwards.
//
// In the tests guardrun's role (the process that starts the sandbox and
// restores after it) is this test process: its pid is the one aimed at.
func TestEscapesAtGuardrun(t *testing.T) {
	requireSandbox(t)
	f := newFixture(t)
	self := strconv.Itoa(os.Getpid())
	// guardrun's own executable, the nesting trampoline: this test
	// binary here.
	testExe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}

	victim := exec.Command("sleep", "60")
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { victim.Process.Kill(); victim.Wait() }()
	vpid := strconv.Itoa(victim.Process.Pid)
	alive := func(t *testing.T) {
		st, _ := os.ReadFile("/proc/" + vpid + "/stat")
		if len(st) == 0 || strings.Contains(string(st), ") Z ") {
			t.Error("the host process was killed")
		}
	}

	// A host segment of SysV shared memory, the user's only (0600).
	const shmText = "host shared memory\x00"
	key := int(0x6a000000 | time.Now().UnixNano()&0xffffff)
	shmID, err := unix.SysvShmGet(key, 4096, unix.IPC_CREAT|unix.IPC_EXCL|0o600)
	if err != nil {
		t.Fatalf("shmget: %v", err)
	}
	shm, err := unix.SysvShmAttach(shmID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	copy(shm, shmText)
	defer func() {
		unix.SysvShmDetach(shm)
		unix.SysvShmCtl(shmID, unix.IPC_RMID, nil)
	}()

	// A host POSIX message queue with one message, the user's only,
	// and a name the host has none of yet.
	mqName := "guardrun-mq-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	mqCount := hostMQ(t, mqName)
	mqNew := mqName + "-new"
	t.Cleanup(func() { mqRemove(mqNew) })

	// The secret guardrun drops from the command's environment
	// (GITHUB_TOKEN in f.env), reversed for the probe's arguments.
	secret := "GITHUB_TOKEN=host-secret"
	rev := []byte(secret)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}

	var rlim unix.Rlimit
	if err := unix.Prlimit(0, unix.RLIMIT_CORE, nil, &rlim); err != nil {
		t.Fatal(err)
	}
	squat := "guardrun-squat-" + f.marker
	squat13 := strconv.FormatInt(time.Now().UnixNano(), 36)
	squat13 = "g-" + squat13[len(squat13)-11:]
	netProfile := f.deriveWith(t, f.ws, true)
	nestedConfig := filepath.Join(f.ws, "nested/.git/config")
	planted := filepath.Join(f.ws, "nested/.claude")
	commondir := filepath.Join(f.ws, ".git/commondir")
	envrc := filepath.Join(f.ws, "deep/x/.envrc")
	cloneMarker := "guardrun-cloneparent-" + f.marker

	// Killing or stopping guardrun after changing a protected name: this
	// test process, guardrun's role, must survive (else the test binary
	// dies), and under landlock put the name back afterwards.
	killRow := func(name, sig string) attack {
		host := func(t *testing.T) {
			absent(commondir)(t)
			alive(t)
			if st, _ := os.ReadFile("/proc/" + vpid + "/stat"); strings.Contains(string(st), ") T ") {
				t.Error("the host process was stopped")
				victim.Process.Signal(syscall.SIGCONT)
			}
		}
		return attack{escape: escape{name: name, args: []string{"kill-guardrun", self, sig, commondir}, host: host},
			after: func(t *testing.T, out string) {
				if !restoredLine(out, commondir) {
					t.Errorf("the output does not say %s was moved aside after the attempt:\n%s", commondir, out)
				}
			}}
	}
	keepFile := filepath.Join(f.outside, "keep")
	var keepSt unix.Stat_t
	if err := unix.Stat(keepFile, &keepSt); err != nil {
		t.Fatal(err)
	}
	metaSame := func(t *testing.T) {
		var now unix.Stat_t
		if err := unix.Stat(keepFile, &now); err != nil {
			t.Fatal(err)
		}
		if now.Mode != keepSt.Mode || now.Uid != keepSt.Uid || now.Gid != keepSt.Gid || now.Mtim != keepSt.Mtim {
			t.Errorf("%s's metadata changed on the host: mode %o uid %d mtime %v (was %o %d %v)",
				keepFile, now.Mode, now.Uid, now.Mtim, keepSt.Mode, keepSt.Uid, keepSt.Mtim)
		}
		if v, err := unix.Getxattr(keepFile, "user.pwn", make([]byte, 8)); err == nil {
			t.Errorf("%s got an extended attribute on the host (%d bytes)", keepFile, v)
		}
	}
	metaRow := func(name, way string, extra ...string) attack {
		return attack{escape: escape{name: name, args: append([]string{"meta", way, keepFile}, extra...), host: metaSame}}
	}
	var outsideSt unix.Stat_t
	if err := unix.Stat(f.outside, &outsideSt); err != nil {
		t.Fatal(err)
	}
	tmpTarget := filepath.Join(f.ws, "tmp-link-target")
	if err := os.WriteFile(tmpTarget, []byte("target\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	os.Chmod(tmpTarget, 0o640)
	rows := []attack{
		{escape: escape{name: "signal guardrun from behind its own trampoline, run again from inside (nested, twice, odd argv)",
			args: []string{"nest-signal", testExe, self}, host: alive}},
		// The keeper: the trampoline that stays in the outer domain as
		// the command's parent.
		{escape: escape{name: "signal the command's keeper (kill, tgkill, sigqueue, pidfd, SIGIO; its group, left, to be relayed back)",
			args: []string{"keeper-signal"}, host: alive}, onlyLL: noKeeper},
		{escape: escape{name: "read the keeper's memory, environment, descriptors, cwd, root and exe through /proc",
			args: []string{"keeper-proc"}}, onlyLL: noKeeper},
		{escape: escape{name: "change the keeper's scheduling (nice, policy, affinity, I/O priority, limits)",
			args: []string{"sched", "keeper"}}, onlyLL: noKeeper},
		{escape: escape{name: "run the trampoline with crafted argv (a directory, missing, empty, nested once and twice)",
			args: []string{"nest-args", testExe, self, filepath.Join(f.outside, "keep")}, host: alive}},
		{escape: escape{name: "orphan a trampoline run from inside (its kill(-1) must stay in its own domain)",
			args: []string{"nest-orphan", testExe, f.marker + "-orphan"}, host: alive}, onlyLL: noKeeper},
		{escape: escape{name: "change a host process's scheduling (nice, SCHED_IDLE, affinity, I/O priority)",
			args: []string{"sched", vpid}, host: alive}},
		{escape: escape{name: "change guardrun's scheduling (nice, SCHED_IDLE, affinity, I/O priority)",
			args: []string{"sched", self}}},
		// Other processes through calls that name no path and send no
		// signal.
		{escape: escape{name: "page calls on guardrun (process_madvise, move_pages, migrate_pages, kcmp, waitid, get_robust_list)",
			args: []string{"xproc-mm", self}}},
		{escape: escape{name: "page calls on the keeper (process_madvise, move_pages, migrate_pages, kcmp, waitid, get_robust_list)",
			args: []string{"xproc-mm", "keeper"}}, onlyLL: noKeeper},
		{escape: escape{name: "page calls on a host process (process_madvise, move_pages, migrate_pages, kcmp, waitid, get_robust_list)",
			args: []string{"xproc-mm", vpid}, host: alive}},
		{escape: escape{name: "null signal to guardrun through a pidfd, scoped to its thread, process and process group",
			args: []string{"pidfd-group", self}}},
		{escape: escape{name: "null signal to the keeper through a pidfd, scoped to its thread, process and process group",
			args: []string{"pidfd-group", "keeper"}}, onlyLL: noKeeper},
		{escape: escape{name: "scheduling of every process of the user and of the command's process group (PRIO_USER, IOPRIO_WHO_USER, PGRP 0)",
			args: []string{"sched-user"}},
			onlyLL: "under bwrap the sandbox's pid namespace holds every process a user or group scope reaches"},
		{escape: escape{name: "a CLONE_PARENT sibling of the command (the keeper's child) signals guardrun and the keeper, and outlives the command",
			args: []string{"clone-parent", self, cloneMarker}, host: func(t *testing.T) {
				if !waitFor(10*time.Second, func() bool { return len(markerProcesses(cloneMarker)) == 0 }) {
					t.Errorf("the CLONE_PARENT sibling outlived the command: %q", markerProcesses(cloneMarker))
				}
			}}},
		{escape: escape{name: "make itself real-time, deadline-scheduled or nicer than guardrun, itself or its autogroup (RLIMIT_RTPRIO, RLIMIT_NICE raised where the test may)",
			args: []string{"sched-self"}}, schedLimits: true},
		{escape: escape{name: "take over a terminal that is another session's (foreground group, TIOCSCTTY forced, TIOCCONS)",
			args: []string{"tty-steal"}}, stdin: ttyOfSession},
		{escape: escape{name: "write guardrun's OOM score, autogroup nice, core dump filter and name through /proc",
			args: []string{"proc-write", self}}},
		{escape: escape{name: "write the keeper's OOM score, autogroup nice, core dump filter and name through /proc",
			args: []string{"proc-write", "keeper"}}, onlyLL: noKeeper},
		{escape: escape{name: "write a host process's OOM score, autogroup nice, core dump filter and name through /proc",
			args: []string{"proc-write", vpid}, host: alive}},
		metaRow("metadata of a file outside through /proc/self/fd of an O_PATH fd", "procfd"),
		metaRow("metadata of a file outside through a read-only fd and AT_EMPTY_PATH", "emptypath"),
		metaRow("metadata of a file outside through the dirfd of its directory", "dirfd"),
		metaRow("metadata of a file outside through /proc/self/cwd after chdir", "cwd"),
		metaRow("metadata of a file outside through zone/../..", "dotdot", filepath.Join(f.ws, "sub/dir")),
		metaRow("metadata of a file outside through fchmodat2 AT_EMPTY_PATH|AT_SYMLINK_NOFOLLOW", "fchmodat2"),
		metaRow("extended attribute of a file outside through /proc/self/fd", "xattr"),
		metaRow("metadata of a file outside through a hard link made in a zone", "hardlink", filepath.Join(f.ws, "sub/dir")),
		metaRow("metadata of a file outside through a path of PATH_MAX-1 bytes", "pathmax"),
		metaRow("metadata of a file outside through a path of exactly PATH_MAX bytes", "pathmax-exact"),
		metaRow("metadata of a file outside through links made in a zone (dir link, .., trailing slash, NOFOLLOW)", "symlink", filepath.Join(f.ws, "sub/dir")),
		metaRow("metadata of a file outside through /proc/PID/root of guardrun and of pid 1", "procroot", self),
		metaRow("metadata calls with unmapped path memory, then a file outside", "badaddr"),
		metaRow("metadata of a file outside through a zone name flipped to a link to it during the calls", "race", filepath.Join(f.ws, "sub/dir")),
		killRow("SIGKILL every thread of guardrun's process, and kill(-1, SIGKILL)", "9"),
		killRow("SIGSTOP every thread of guardrun's process, and kill(-1, SIGSTOP)", "19"),
		{escape: escape{name: "read guardrun's environment and memory through its restricted thread",
			args: []string{"parent-memory", self, string(rev)}}},
		{escape: escape{name: "write guardrun's memory through /proc", args: []string{"proc-mem-write", self}}},
		{escape: escape{name: "signal a thread of guardrun's process (SIGKILL would skip the restore)",
			args: []string{"signal-thread", self}}},
		{escape: escape{name: "change guardrun's resource limits (prlimit)", args: []string{"prlimit", self},
			host: func(t *testing.T) {
				var now unix.Rlimit
				if unix.Prlimit(0, unix.RLIMIT_CORE, nil, &now) != nil || now != rlim {
					t.Errorf("RLIMIT_CORE changed: %+v, was %+v", now, rlim)
				}
			}}},
		{escape: escape{name: "write the host's SysV shared memory", args: []string{"sysv-shm", strconv.Itoa(key)},
			host: func(t *testing.T) {
				if got := string(shm[:len(shmText)]); got != shmText {
					t.Errorf("the host's segment now holds %q", got)
				}
			}}},
		{escape: escape{name: "open the host's POSIX message queue", args: []string{"posix-mq", mqName},
			host: func(t *testing.T) {
				if n := mqCount(); n != 1 {
					t.Errorf("the host's message queue holds %d messages, not its 1", n)
				}
			}}},
		{escape: escape{name: "remove the host's POSIX message queue", args: []string{"mq-unlink", mqName},
			host: func(t *testing.T) {
				if !mqExists(mqName) {
					t.Errorf("the host's message queue /%s is gone", mqName)
				}
				if n := mqCount(); n != 1 {
					t.Errorf("the host's message queue holds %d messages, not its 1", n)
				}
			}}},
		{escape: escape{name: "create a POSIX message queue under a name the host has not used yet", args: []string{"mq-create", mqNew},
			host: func(t *testing.T) {
				if mqExists(mqNew) {
					t.Errorf("the host now has a message queue /%s", mqNew)
				}
			}}, onlyLL: "under bwrap the sandbox has an IPC namespace of its own: a queue it creates is its own"},
		// With the network on the command shares the host's network
		// namespace, and its abstract unix names.
		{escape: escape{name: "squat a host abstract socket name from a stream socketpair, network on", args: []string{"bind-abstract", squat, "stream"},
			host: abstractFree(squat)}, network: true},
		{escape: escape{name: "squat a host abstract socket name from a seqpacket socketpair, network on", args: []string{"bind-abstract", squat, "seqpacket"},
			host: abstractFree(squat)}, network: true},
		{escape: escape{name: "squat a 13-byte host abstract socket name (the length of an IPv4 address), network on", args: []string{"bind-abstract", squat13, "stream"},
			host: abstractFree(squat13)}, network: true,
			onlyLL: "under bwrap with the network on a name of exactly 9, 13, 21 or 25 bytes can still be taken (docs/limitations.md)"},
		// The lengths next to the four the filter lets through under
		// bwrap, and the longest; the four themselves only under
		// landlock, which reads the address.
		squatLen(squat13, 8, false), squatLen(squat13, 10, false), squatLen(squat13, 12, false), squatLen(squat13, 14, false),
		squatLen(squat13, 20, false), squatLen(squat13, 22, false), squatLen(squat13, 24, false), squatLen(squat13, 26, false),
		squatLen(squat13, 106, false),
		squatLen(squat13, 9, true), squatLen(squat13, 21, true), squatLen(squat13, 25, true),
		{escape: escape{name: "bind a socketpair end to a path outside every zone, network on", args: []string{"bind-path", filepath.Join(f.outside, "net.sock"), "stream"},
			host: absent(filepath.Join(f.outside, "net.sock"))}, network: true},
		{escape: escape{name: "take a read lease on guardrun's config (its writers on the host would wait)", args: []string{"lease", f.config}}},
		{escape: escape{name: "take a read lease on a read-only zone's file", args: []string{"lease", filepath.Join(f.home, ".bashrc")}}},
		{escape: escape{name: "SIGKILL a host process as its SIGIO", args: []string{"sigio", vpid}, host: alive}},
		{escape: escape{name: "SIGKILL a host process through a pidfd", args: []string{"pidfd-kill", vpid}, host: alive}},
		{escape: escape{name: "link an O_TMPFILE out of the zones",
			args: []string{"tmpfile-link", filepath.Join(f.ws, "sub/dir"), filepath.Join(f.outside, "tmpfile")},
			host: absent(filepath.Join(f.outside, "tmpfile"))}},
		{escape: escape{name: "truncate a file outside every zone", args: []string{"truncate", filepath.Join(f.outside, "keep")},
			host: unchanged(filepath.Join(f.outside, "keep"), "outside\n")}},
		{escape: escape{name: "truncate guardrun's config", args: []string{"truncate", f.config},
			host: unchanged(f.config, "mode: strict\n")}},
		{escape: escape{name: "squat a host abstract socket name from a socketpair", args: []string{"bind-abstract", squat},
			host: abstractFree(squat)}},
		{escape: escape{name: "bind a socket outside every zone", args: []string{"bind-path", filepath.Join(f.outside, "s.sock")},
			host: absent(filepath.Join(f.outside, "s.sock"))}},
		{escape: escape{name: "squat a host abstract socket name from a stream socketpair", args: []string{"bind-abstract", squat, "stream"},
			host: abstractFree(squat)}},
		{escape: escape{name: "bind a stream socketpair end outside every zone", args: []string{"bind-path", filepath.Join(f.outside, "s.sock"), "stream"},
			host: absent(filepath.Join(f.outside, "s.sock"))}},
		{escape: escape{name: "squat a host abstract socket name from a seqpacket socketpair", args: []string{"bind-abstract", squat, "seqpacket"},
			host: abstractFree(squat)}},
		{escape: escape{name: "bind a seqpacket socketpair end outside every zone", args: []string{"bind-path", filepath.Join(f.outside, "s.sock"), "seqpacket"},
			host: absent(filepath.Join(f.outside, "s.sock"))}},
		{escape: escape{name: "write through /proc/PID/root of guardrun",
			args: []string{"proc-root-write", self, filepath.Join(f.outside, "viaroot")},
			host: absent(filepath.Join(f.outside, "viaroot"))}},
		{escape: escape{name: "watch a directory outside every zone (inotify)", args: []string{"inotify", f.outside}}},
		{escape: escape{name: "create .git/commondir (git then takes its config from elsewhere)",
			args: []string{"write", commondir}, host: absent(commondir), restored: commondir},
			// No placeholder can keep it missing (git refuses any), so
			// both backends move it aside after the command.
			movedAfter: true},
		{escape: escape{name: "create a protected name and take every quarantine name",
			args: []string{"quarantine-fill", planted}, host: absent(planted), restored: planted}},
		// The move aside after the command, given something odd at the name.
		{escape: escape{name: "create .git/commondir as a link to a file outside (the move must not follow it)",
			args: []string{"make-odd", "symlink", commondir, keepFile}, restored: commondir,
			host: func(t *testing.T) { absent(commondir)(t); metaSame(t); unchanged(keepFile, "outside\n")(t) }},
			movedAfter: true},
		{escape: escape{name: "create .git/commondir as a directory", args: []string{"make-odd", "dir", commondir},
			host: absent(commondir), restored: commondir}, movedAfter: true},
		{escape: escape{name: "create .git/commondir as an empty sticky read-only directory (a bwrap placeholder no run holds; git dies on it)",
			args: []string{"make-odd", "placeholder", commondir}, host: absent(commondir), restored: commondir}, movedAfter: true},
		// Names bwrap masks with its own placeholder: refused there
		// (the mount point is in the way), moved aside under landlock.
		{escape: escape{name: "create a missing protected .vscode as an empty sticky read-only directory (a bwrap placeholder no run holds)",
			args: []string{"make-odd", "placeholder", filepath.Join(f.ws, ".vscode")}, host: absent(filepath.Join(f.ws, ".vscode")), restored: filepath.Join(f.ws, ".vscode")}},
		{escape: escape{name: "create a missing protected .bashrc as a sticky read-only directory with a file in it",
			args: []string{"make-odd", "placeholder-full", filepath.Join(f.ws, ".bashrc")}, host: absent(filepath.Join(f.ws, ".bashrc")), restored: filepath.Join(f.ws, ".bashrc")}},
		{escape: escape{name: "create .git/commondir as a fifo (the move must not block on it)", args: []string{"make-odd", "fifo", commondir},
			host: absent(commondir), restored: commondir}, movedAfter: true},
		{escape: escape{name: "leave links to outside, a hard link and mode-0 directories in $TMPDIR for its removal to follow",
			args: []string{"tmp-odd", f.outside, tmpTarget, "guardrun-tmpodd-" + f.marker},
			host: func(t *testing.T) {
				metaSame(t)
				unchanged(keepFile, "outside\n")(t)
				var now unix.Stat_t
				if err := unix.Stat(f.outside, &now); err != nil || now.Mode != outsideSt.Mode {
					t.Errorf("%s's mode changed on the host: %o (was %o), %v", f.outside, now.Mode, outsideSt.Mode, err)
				}
				if err := unix.Stat(tmpTarget, &now); err != nil || now.Mode&0o7777 != 0o640 {
					t.Errorf("%s changed on the host: mode %o, %v", tmpTarget, now.Mode, err)
				}
				unchanged(tmpTarget, "target\n")(t)
				if left, _ := filepath.Glob(filepath.Join(os.TempDir(), "guardrun-tmp-*", "guardrun-tmpodd-"+f.marker+"*")); len(left) > 0 {
					t.Errorf("the command's $TMPDIR was left: %q", left)
				}
			}}},
		// Last: they leave nested/.git and deep/x read-only.
		{escape: escape{name: "change a protected file and make its directory read-only",
			args: []string{"chmod-dir", nestedConfig}, restored: nestedConfig,
			host: func(t *testing.T) {
				unchanged(nestedConfig, gitConfigText)(t)
				os.Chmod(filepath.Dir(nestedConfig), 0o755)
			}}},
		{escape: escape{name: "change a protected file and make its directory unsearchable",
			args: []string{"chmod-dir", envrc, "0"}, restored: envrc,
			host: func(t *testing.T) {
				os.Chmod(filepath.Dir(envrc), 0o755)
				unchanged(envrc, "export A=1\n")(t)
			}}},
	}

	rows = append(rows, watchRows(t, f, self, metaSame)...)

	var summary []string
	defer func() { t.Logf("summary (uid %d):\n%s", os.Geteuid(), strings.Join(summary, "\n")) }()
	for _, a := range rows {
		t.Run(a.name, func(t *testing.T) {
			if a.skip != "" {
				t.Skip(a.skip)
			}
			if landlockTest() && a.gapLL != "" {
				t.Skip("known gap: " + a.gapLL)
			}
			if !landlockTest() && a.onlyLL != "" {
				t.Skip(a.onlyLL)
			}
			if a.schedLimits {
				raiseSchedLimits(t)
			}
			if a.network {
				saved := f.profile
				f.profile = netProfile
				defer func() { f.profile = saved }()
			}
			var stdin io.Reader
			if a.stdin != nil {
				stdin = a.stdin(t)
			}
			status, out := f.run(t, stdin, append([]string{probePath}, a.args...)...)
			m := probeResult(t, status, out)
			switch {
			case strings.HasPrefix(m[2], "ALLOWED") && a.restored != "" && (landlockTest() || a.movedAfter):
				if !restoredLine(out, a.restored) {
					t.Errorf("allowed inside, and the output does not say %s was restored or moved aside:\n%s", a.restored, out)
				}
				summary = append(summary, fmt.Sprintf("  %-60s %s", a.name, "(restored after the command)"))
			case strings.HasPrefix(m[2], "ALLOWED"):
				t.Errorf("NOT REFUSED: %s", strings.TrimSpace(m[0]))
			case strings.HasPrefix(m[2], "SETUP"):
				t.Fatalf("the probe could not set up the attempt: %s", strings.TrimSpace(m[0]))
			case status != 0:
				t.Errorf("status %d:\n%s", status, out)
			default:
				summary = append(summary, fmt.Sprintf("  %-60s %s", a.name, m[3]))
				if a.after != nil {
					a.after(t, out)
				}
			}
			if a.host != nil {
				a.host(t)
			}
			if t.Failed() {
				t.Logf("output:\n%s", out)
			}
		})
	}
	if err := victim.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the host process is gone: %v", err)
	}
}

// hostMQ makes the host's POSIX message queue /name (0600) holding one
// message, removed at the test's end; the count it returns says how many
// messages it holds now.
func hostMQ(t *testing.T, name string) func() int64 {
	t.Helper()
	p, err := unix.BytePtrFromString(name)
	if err != nil {
		t.Fatal(err)
	}
	// struct mq_attr: flags, maxmsg, msgsize, curmsgs (longs).
	attr := [8]int64{0, 4, 64, 0}
	fd, _, e := unix.Syscall6(unix.SYS_MQ_OPEN, uintptr(unsafe.Pointer(p)), unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600, uintptr(unsafe.Pointer(&attr[0])), 0, 0)
	if e != 0 {
		t.Fatalf("mq_open %s: %v", name, e)
	}
	t.Cleanup(func() {
		unix.Close(int(fd))
		unix.Syscall(unix.SYS_MQ_UNLINK, uintptr(unsafe.Pointer(p)), 0, 0)
	})
	msg := []byte("host message")
	if _, _, e := unix.Syscall6(unix.SYS_MQ_TIMEDSEND, fd, uintptr(unsafe.Pointer(&msg[0])), uintptr(len(msg)), 0, 0, 0); e != 0 {
		t.Fatalf("mq_send: %v", e)
	}
	return func() int64 {
		var now [8]int64
		if _, _, e := unix.Syscall(unix.SYS_MQ_GETSETATTR, fd, 0, uintptr(unsafe.Pointer(&now[0]))); e != 0 {
			t.Fatalf("mq_getattr: %v", e)
		}
		return now[3]
	}
}

// mqExists reports whether the host has a POSIX message queue /name.
func mqExists(name string) bool {
	p, err := unix.BytePtrFromString(name)
	if err != nil {
		return false
	}
	fd, _, e := unix.Syscall6(unix.SYS_MQ_OPEN, uintptr(unsafe.Pointer(p)), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0, 0, 0, 0)
	if e != 0 {
		return false
	}
	unix.Close(int(fd))
	return true
}

// mqRemove removes the host's POSIX message queue /name, if any.
func mqRemove(name string) {
	if p, err := unix.BytePtrFromString(name); err == nil {
		unix.Syscall(unix.SYS_MQ_UNLINK, uintptr(unsafe.Pointer(p)), 0, 0)
	}
}

// raiseSchedLimits raises this process's RLIMIT_RTPRIO and RLIMIT_NICE
// (soft and hard) for the test, restoring them after, and reports
// whether it could: it needs CAP_SYS_RESOURCE. A command started with
// them could make itself real-time, or nicer than guardrun, unless the
// sandbox takes them away.
func raiseSchedLimits(t *testing.T) bool {
	t.Helper()
	raised := true
	for _, r := range []struct {
		res int
		to  uint64
	}{{unix.RLIMIT_RTPRIO, 1}, {unix.RLIMIT_NICE, 40}} {
		var old unix.Rlimit
		if err := unix.Prlimit(0, r.res, nil, &old); err != nil {
			t.Fatal(err)
		}
		if err := unix.Prlimit(0, r.res, &unix.Rlimit{Cur: r.to, Max: r.to}, nil); err != nil {
			t.Logf("resource %d stays at %d (raising it: %v): the attempt runs under the host's limits", r.res, old.Cur, err)
			raised = false
			continue
		}
		t.Cleanup(func() { unix.Prlimit(0, r.res, &old, nil) })
	}
	return raised
}

// ttyOfSession makes a terminal (a pty) the controlling terminal of a
// host session (a sleep, its leader, as the person's shell would be) and
// returns it for the command's stdin; after the row, the session must
// still hold it and its leader still run.
func ttyOfSession(t *testing.T) *os.File {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	pts, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pts.Close() })
	leader := exec.Command("sleep", "60")
	leader.Stdin = pts
	leader.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := leader.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sid, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGSID)
		if err != nil || sid != leader.Process.Pid {
			t.Errorf("the terminal's session is %d (%v), no longer its leader's %d", sid, err, leader.Process.Pid)
		}
		if err := leader.Process.Signal(syscall.Signal(0)); err != nil {
			t.Errorf("the terminal's session leader is gone: %v", err)
		}
		leader.Process.Kill()
		leader.Wait()
	})
	// The leader's session holds the terminal once it runs.
	if !waitFor(10*time.Second, func() bool {
		sid, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGSID)
		return err == nil && sid == leader.Process.Pid
	}) {
		t.Fatal("the pty never became the session leader's controlling terminal")
	}
	return pts
}

// squatLen is the row that squats a host abstract name of n bytes (the
// leading NUL not counted) made from base, with the network on; gap: one
// of the lengths the bwrap filter lets through.
func squatLen(base string, n int, gap bool) attack {
	name := (base + strings.Repeat("x", n))[:n]
	a := attack{escape: escape{name: fmt.Sprintf("squat a %d-byte host abstract socket name, network on", n),
		args: []string{"bind-abstract", name, "stream"}, host: abstractFree(name)}, network: true}
	if gap {
		a.onlyLL = "under bwrap with the network on a name of exactly 9, 13, 21 or 25 bytes can still be taken (docs/limitations.md)"
	}
	return a
}

// abstractFree checks, after an attempt, that the abstract socket name is
// still free for a host daemon to bind.
func abstractFree(name string) func(*testing.T) {
	return func(t *testing.T) {
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fd)
		if err := unix.Bind(fd, &unix.SockaddrUnix{Name: "@" + name}); err != nil {
			t.Errorf("the host cannot bind @%s: %v", name, err)
		}
	}
}
