//go:build linux && cgo

package notify

/*
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

// The marker HelperArg: argv[1] of guardrun's own executable started
// as the helper of a verified command. It starts with \x01, which no
// ordinary invocation passes as its first argument.
#define GUARDRUN_VERIFY_ARG "\x01guardrun-verify-init"

static void guardrun_verify_fail(const char *what, const char *arg, int err, int status) {
	const char *msg = strerror(err);
	const char *parts[] = {"guardrun: verify: ", what, arg ? " " : "", arg ? arg : "", ": ", msg, "\n"};
	for (unsigned i = 0; i < sizeof parts / sizeof parts[0]; i++) {
		ssize_t n = write(2, parts[i], strlen(parts[i]));
		(void)n;
	}
	_exit(status);
}

static int guardrun_verify_fd(const char *s) {
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < 3 || v > 1 << 20) {
		guardrun_verify_fail("bad descriptor", s, EINVAL, 125);
	}
	return (int)v;
}

// guardrun_verify_init runs before the Go runtime starts (an ELF
// constructor, as landlock's trampoline). Started in the sandbox as
// "EXE \x01guardrun-verify-init FILTER-FD SOCKET-FD ARGV...", it reads
// the verified command's filter from FILTER-FD, loads it on itself with
// a listener (SECCOMP_FILTER_FLAG_NEW_LISTENER, stacked on the
// sandbox's own filter), sends the listener to guardrun over SOCKET-FD
// (SCM_RIGHTS), waits for guardrun to say it serves it, closes both,
// and execs ARGV, searching PATH as a shell would: that exec is the
// first guardrun verifies. It holds nothing after the exec: the listener
// is close-on-exec and closed, the filter's and the socket's
// descriptors closed. Any failure exits 125 (126, 127 for an ARGV that
// cannot be run) without running ARGV. Anyone calling it only puts
// themselves under one more filter, served by nobody (every routed call
// then fails with ENOSYS).
__attribute__((constructor)) static void guardrun_verify_init(int argc, char **argv, char **envp) {
	(void)envp;
	if (argc < 5 || argv == NULL || argv[1] == NULL || strcmp(argv[1], GUARDRUN_VERIFY_ARG) != 0) {
		return;
	}
	int ffd = guardrun_verify_fd(argv[2]);
	int sfd = guardrun_verify_fd(argv[3]);
	static unsigned char prog[BPF_MAXINSNS * sizeof(struct sock_filter) + 1];
	size_t n = 0;
	for (;;) {
		ssize_t r = read(ffd, prog + n, sizeof prog - n);
		if (r < 0 && errno == EINTR) {
			continue;
		}
		if (r < 0) {
			guardrun_verify_fail("read the filter", NULL, errno, 125);
		}
		if (r == 0) {
			break;
		}
		n += (size_t)r;
		if (n == sizeof prog) {
			guardrun_verify_fail("read the filter", NULL, E2BIG, 125);
		}
	}
	close(ffd);
	if (n == 0 || n % sizeof(struct sock_filter) != 0) {
		guardrun_verify_fail("read the filter", NULL, EINVAL, 125);
	}
	struct sock_fprog fp = {(unsigned short)(n / sizeof(struct sock_filter)), (struct sock_filter *)prog};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
		guardrun_verify_fail("no_new_privs", NULL, errno, 125);
	}
	long l = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &fp);
	if (l < 0 && errno == EINVAL) {
		l = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &fp);
	}
	if (l < 0) {
		guardrun_verify_fail("load the filter with a listener", NULL, errno, 125);
	}
	int lfd = (int)l;
	char tag = 'L';
	struct iovec iov = {&tag, 1};
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} cm;
	memset(&cm, 0, sizeof cm);
	struct msghdr msg = {0};
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cm.buf;
	msg.msg_controllen = sizeof cm.buf;
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &lfd, sizeof(int));
	ssize_t s;
	do {
		s = sendmsg(sfd, &msg, MSG_NOSIGNAL);
	} while (s < 0 && errno == EINTR);
	if (s != 1) {
		guardrun_verify_fail("hand the listener to guardrun", NULL, s < 0 ? errno : EIO, 125);
	}
	close(lfd);
	char ack = 0;
	do {
		s = read(sfd, &ack, 1);
	} while (s < 0 && errno == EINTR);
	if (s != 1 || ack != 'K') {
		guardrun_verify_fail("guardrun did not take the listener", NULL, s < 0 ? errno : EPIPE, 125);
	}
	close(sfd);
	execvp(argv[4], argv + 4);
	guardrun_verify_fail("start", argv[4], errno, errno == ENOENT ? 127 : 126);
}
*/
import "C"

// HelperAvailable: this binary holds the helper of verified commands
// (cgo).
const HelperAvailable = true
