//go:build linux && cgo

package landlock

/*
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
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

// guardrun_landlock_nest runs before the Go runtime starts (an ELF
// constructor; glibc passes argc, argv and envp to them, in the static
// binary too). Started as "EXE \x01guardrun-landlock-nest PATH ARGV...",
// it puts itself into a new Landlock domain nested in the one it
// inherited, with signals and abstract unix sockets scoped, and execs
// PATH with ARGV. It never returns into Go; every failure exits without
// running PATH. Anyone calling it only restricts themselves further.
__attribute__((constructor)) static void guardrun_landlock_nest(int argc, char **argv, char **envp) {
	if (argc < 4 || argv == NULL || argv[1] == NULL || strcmp(argv[1], GUARDRUN_NEST_ARG) != 0) {
		return;
	}
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
*/
import "C"

// nestAvailable: this binary holds the trampoline (cgo).
const nestAvailable = true
