//go:build linux && cgo

package landlock

/*
#include <errno.h>
#include <time.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

// The marker nestArg: argv[1] of guardrun's own executable started as
// the nesting trampoline. It starts with \x01, which no ordinary
// invocation passes as its first argument.
#define GUARDRUN_NEST_ARG "\x01guardrun-landlock-nest"

struct guardrun_nest_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

// status is 125 (guardrun failed) when the domain could not be made, and
// as a shell reports a command it could not run otherwise: 127 not
// found, 126 found and not run.
static void guardrun_nest_fail(const char *what, const char *path, int err, int status) {
	const char *msg = strerror(err);
	const char *parts[] = {"guardrun: landlock: ", what, path ? " " : "", path ? path : "", ": ", msg, "\n"};
	for (unsigned i = 0; i < sizeof parts / sizeof parts[0]; i++) {
		ssize_t n = write(2, parts[i], strlen(parts[i]));
		(void)n;
	}
	_exit(status);
}

// guardrun_nest_exec: in the keeper's child, a new Landlock domain nested
// in the inherited one, with signals and abstract unix sockets scoped,
// then PATH with ARGV.
static void guardrun_nest_exec(char **argv, char **envp) {
	struct guardrun_nest_attr attr = {0, 0, (1ULL << 0) | (1ULL << 1)};
	long fd = syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
	if (fd < 0) {
		guardrun_nest_fail("nested domain: create ruleset", NULL, errno, 125);
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		guardrun_nest_fail("nested domain: no_new_privs", NULL, errno, 125);
	}
	if (syscall(SYS_landlock_restrict_self, (int)fd, 0) != 0) {
		guardrun_nest_fail("nested domain: restrict", NULL, errno, 125);
	}
	close((int)fd);
	execve(argv[2], argv + 3, envp);
	guardrun_nest_fail("start", argv[2], errno, errno == ENOENT ? 127 : 126);
}

// GUARDRUN_NPROC_RESERVE is how many processes and threads of the
// user's RLIMIT_NPROC the command leaves to guardrun: the limit counts
// every process and thread of the user, guardrun's among them, and a Go
// program that cannot start a thread when it needs one aborts. Without
// the reserve a command that forks up to the limit kills guardrun before
// it restores protected names after the command.
#define GUARDRUN_NPROC_RESERVE 64

// guardrun_nest_nproc lowers the command's RLIMIT_NPROC, soft and hard
// (so that it cannot raise it again), by the reserve: the command stops
// forking while guardrun can still start threads. Unlimited (and root,
// whom the kernel does not hold to it) there is no per-user count to
// exhaust.
static void guardrun_nest_nproc(void) {
	struct rlimit lim;
	if (getrlimit(RLIMIT_NPROC, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) {
		return;
	}
	rlim_t v = lim.rlim_cur > 2 * GUARDRUN_NPROC_RESERVE ? lim.rlim_cur - GUARDRUN_NPROC_RESERVE : lim.rlim_cur / 2;
	struct rlimit lower = {v, v};
	if (setrlimit(RLIMIT_NPROC, &lower) != 0) {
		guardrun_nest_fail("nested domain: lower RLIMIT_NPROC", NULL, errno, 125);
	}
}

// guardrun_nest_sched takes from the command what the user's resource
// limits would let it do to its own scheduling that starves guardrun and
// the keeper as surely as changing theirs (which the seccomp filter
// refuses): a real-time policy (RLIMIT_RTPRIO, soft and hard, to 0) and
// a nice value below the keeper's (RLIMIT_NICE to at most 20 minus that
// value, the kernel's encoding). Both are 0 by default, and then nothing
// changes.
static void guardrun_nest_sched(void) {
	struct rlimit none = {0, 0};
	if (setrlimit(RLIMIT_RTPRIO, &none) != 0) {
		guardrun_nest_fail("nested domain: lower RLIMIT_RTPRIO", NULL, errno, 125);
	}
	errno = 0;
	int nice = getpriority(PRIO_PROCESS, 0);
	if (nice == -1 && errno != 0) {
		guardrun_nest_fail("nested domain: getpriority", NULL, errno, 125);
	}
	struct rlimit lim;
	if (getrlimit(RLIMIT_NICE, &lim) != 0) {
		guardrun_nest_fail("nested domain: getrlimit RLIMIT_NICE", NULL, errno, 125);
	}
	rlim_t ceiling = (rlim_t)(20 - nice);
	if (lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur <= ceiling && lim.rlim_max == lim.rlim_cur) {
		return;
	}
	rlim_t v = lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < ceiling ? lim.rlim_cur : ceiling;
	struct rlimit lower = {v, v};
	if (setrlimit(RLIMIT_NICE, &lower) != 0) {
		guardrun_nest_fail("nested domain: lower RLIMIT_NICE", NULL, errno, 125);
	}
}

// guardrun_nest_scoped reports whether the keeper's signals are scoped
// to its Landlock domain, seen at its start: its parent (guardrun, the
// same user, outside every domain) refuses even a null signal. EPERM
// there has no other cause. Started by anyone else (outside a domain,
// or from inside the command's own domain) the parent takes it.
static int guardrun_nest_scoped(pid_t parent) {
	return kill(parent, 0) != 0 && errno == EPERM;
}

// guardrun_nest_end ends every process the keeper may signal: its
// domain's signal scope limits kill(-1) to the command's processes,
// wherever they were reparented. Only if the scope was seen in force at
// the start (scoped) and still is (the keeper's new parent, outside the
// domain, cannot even be probed): otherwise kill(-1) would reach every
// process of the user. (EPERM from the new parent alone proves nothing:
// an init or subreaper of another user gives it too.)
static void guardrun_nest_end(int scoped) {
	if (!scoped || kill(getppid(), 0) == 0 || errno != EPERM) {
		return;
	}
	for (int i = 0; i < 2; i++) {
		kill(-1, SIGKILL);
	}
}

// guardrun_nest_exit ends the keeper as its child ended: the same exit
// code, or the same signal (without a core file of its own).
static void guardrun_nest_exit(int st) {
	if (WIFSIGNALED(st)) {
		int sig = WTERMSIG(st);
		struct rlimit none = {0, 0};
		setrlimit(RLIMIT_CORE, &none);
		signal(sig, SIG_DFL);
		sigset_t one;
		sigemptyset(&one);
		sigaddset(&one, sig);
		sigprocmask(SIG_UNBLOCK, &one, NULL);
		kill(getpid(), sig);
		_exit(128 + sig);
	}
	_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 125);
}

// GUARDRUN_NEST_GONE is the keeper's parent-death signal.
#define GUARDRUN_NEST_GONE (SIGRTMIN + 2)

// guardrun_nest_take acts on a signal the keeper took: the child's end
// (SIGCHLD) ends the keeper the same way; guardrun's death (its
// parent-death signal, with a new parent) ends the command's domain;
// any other signal is for the command. Those reach the command's process
// group, the keeper included, so the keeper passes one on only to a
// child that left the group, or, with early set, to a child that has not
// yet been let go (it was not in the group when the signal was sent, or
// it holds a copy still pending and blocked, which the kernel does not
// queue twice).
static void guardrun_nest_take(int sig, pid_t child, pid_t parent, int scoped, int early) {
	if (sig == SIGCHLD) {
		int st;
		pid_t p = waitpid(child, &st, WNOHANG);
		if (p == child && (WIFEXITED(st) || WIFSIGNALED(st))) {
			guardrun_nest_exit(st);
		}
		return;
	}
	if (sig == GUARDRUN_NEST_GONE && getppid() != parent) {
		guardrun_nest_end(scoped);
		_exit(137);
	}
	if (early || getpgid(child) != getpgrp()) {
		kill(child, sig);
	}
}

// guardrun_landlock_nest runs before the Go runtime starts (an ELF
// constructor; glibc passes argc, argv and envp to them, in the static
// binary too). Started as "EXE \x01guardrun-landlock-nest PATH ARGV..."
// it becomes the command's keeper: it forks a child that puts itself
// into a new Landlock domain nested in the one inherited and execs PATH
// with ARGV, and stays in the outer domain, where the command cannot
// signal it, until that child ends. It exits as the child did. If its
// own parent (guardrun) dies first, it ends every process of the
// command, as guardrun does when the command ends (only when its
// signals are scoped to its domain: started outside one, its child still
// dies with it, and nothing else is signalled). It never returns into
// Go; every failure exits without running PATH. Anyone calling it only
// restricts themselves further.
__attribute__((constructor)) static void guardrun_landlock_nest(int argc, char **argv, char **envp) {
	if (argc < 4 || argv == NULL || argv[1] == NULL || strcmp(argv[1], GUARDRUN_NEST_ARG) != 0) {
		return;
	}
	// Every signal is taken with sigwaitinfo below; the child gets the
	// mask it was started with back.
	sigset_t all, orig;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &orig);
	pid_t parent = getppid();
	int scoped = guardrun_nest_scoped(parent);
	// guardrun's death: until here the SIGKILL guardrun asked for at the
	// fork stands, so a parent gone before this call has killed us.
	const int gone = GUARDRUN_NEST_GONE;
	if (prctl(PR_SET_PDEATHSIG, gone, 0, 0, 0) != 0) {
		guardrun_nest_fail("keeper: parent death signal", NULL, errno, 125);
	}
	if (getppid() != parent) {
		_exit(125);
	}
	pid_t keeper = getpid();
	// The child keeps every signal blocked until the keeper has passed
	// on those that reached the group before the fork (see below) and
	// says so on this pipe. Both ends are closed before anything is
	// executed.
	int handoff[2];
	if (pipe(handoff) != 0) {
		guardrun_nest_fail("keeper: pipe", NULL, errno, 125);
	}
	pid_t child = fork();
	if (child < 0) {
		guardrun_nest_fail("keeper: fork", NULL, errno, 125);
	}
	if (child == 0) {
		close(handoff[1]);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || getppid() != keeper) {
			_exit(125);
		}
		char go;
		ssize_t n;
		do {
			n = read(handoff[0], &go, 1);
		} while (n < 0 && errno == EINTR);
		if (n != 1) {
			_exit(125); // the keeper is gone
		}
		close(handoff[0]);
		sigprocmask(SIG_SETMASK, &orig, NULL);
		guardrun_nest_nproc();
		guardrun_nest_sched();
		guardrun_nest_exec(argv, envp);
	}
	close(handoff[0]);
	// A signal guardrun sent to the command's process group before the
	// fork reached the keeper alone (the group had no other member) and
	// is pending here, blocked: pass each on to the child now. One sent
	// after the fork is pending in the child as well, still blocked, and
	// a signal already pending is not queued twice: the child gets each
	// exactly once, whichever side of the fork it came.
	const struct timespec now = {0, 0};
	for (;;) {
		siginfo_t si;
		int sig = sigtimedwait(&all, &si, &now);
		if (sig < 0) {
			if (errno == EINTR) {
				continue;
			}
			break; // EAGAIN: none pending
		}
		guardrun_nest_take(sig, child, parent, scoped, 1);
	}
	char go = 1;
	ssize_t n;
	do {
		n = write(handoff[1], &go, 1);
	} while (n < 0 && errno == EINTR);
	close(handoff[1]);
	// The keeper holds none of the command's descriptors: a reader of
	// the command's output sees its end when the command closes it.
	if (syscall(SYS_close_range, 0U, ~0U, 0U) != 0) {
		for (int fd = 0; fd < 65536; fd++) {
			close(fd);
		}
	}
	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(&all, &si);
		if (sig < 0) {
			continue;
		}
		guardrun_nest_take(sig, child, parent, scoped, 0);
	}
}
*/
import "C"

// nestAvailable: this binary holds the trampoline (cgo).
const nestAvailable = true
