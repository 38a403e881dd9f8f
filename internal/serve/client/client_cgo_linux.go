//go:build linux && cgo

package client

/*
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <stdio.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#ifndef O_PATH
#define O_PATH 010000000
#endif

static void grs_put32(char *p, uint32_t v) {
	p[0] = (char)(v & 0xff);
	p[1] = (char)((v >> 8) & 0xff);
	p[2] = (char)((v >> 16) & 0xff);
	p[3] = (char)((v >> 24) & 0xff);
}

static uint32_t grs_get32(const unsigned char *p) {
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int grs_send_all(int fd, const char *p, size_t n) {
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR) {
			continue;
		}
		if (w <= 0) {
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

// grs_read_all: 0 when n bytes were read, -1 at EOF or on an error.
static int grs_read_all(int fd, unsigned char *p, size_t n) {
	while (n > 0) {
		ssize_t r = read(fd, p, n);
		if (r < 0 && errno == EINTR) {
			continue;
		}
		if (r <= 0) {
			return -1;
		}
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

static void grs_lost(const char *why, int err) {
	const char *msg = err ? strerror(err) : "";
	const char *parts[] = {"guardrun: lost the guardrun server (", why, err ? ": " : "", msg, ")\n"};
	for (unsigned i = 0; i < sizeof parts / sizeof parts[0]; i++) {
		ssize_t w = write(2, parts[i], strlen(parts[i]));
		(void)w;
	}
	_exit(125);
}

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

// grs_status_line: the text after "NAME:" in a /proc status file, in
// buf; NULL when missing.
static char *grs_status_line(const char *file, const char *name, char *buf, size_t size) {
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return NULL;
	}
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0) {
		return NULL;
	}
	buf[n] = 0;
	size_t l = strlen(name);
	for (char *p = buf; p != NULL; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, name, l) == 0 && p[l] == ':') {
			char *end = strchr(p, '\n');
			if (end) {
				*end = 0;
			}
			return p + l + 1;
		}
	}
	return NULL;
}

// grs_status_num: the number of NAME in a status file, or -1.
static long grs_status_num(const char *file, const char *name) {
	char buf[4096];
	char *v = grs_status_line(file, name, buf, sizeof buf);
	return v ? strtol(v, NULL, 10) : -1;
}

// grs_status_words: how many words NAME has in a status file, or -1.
static int grs_status_words(const char *file, const char *name) {
	char buf[4096];
	char *v = grs_status_line(file, name, buf, sizeof buf);
	if (v == NULL) {
		return -1;
	}
	int n = 0;
	for (char *t = strtok(v, " \t"); t; t = strtok(NULL, " \t")) {
		n++;
	}
	return n;
}

// grs_server_ok: whether the server (the peer, pid) is confined no more
// than this process: no more seccomp filters, no no_new_privs this
// process lacks, no deeper pid namespace, and, where this process may
// look (a server that ran a landlock command is not dumpable), the same
// mount, user and pid namespaces and root directory. The request hands
// the server descriptors (the working directory's among them), which a
// command in a sandbox listening at $GUARDRUN_SERVER must not get (a
// guardrun sandbox always has a seccomp filter and no_new_privs of its
// own). pidfd (-1 without SO_PEERPIDFD) proves the pid was not reused
// while its /proc was read.
static int grs_server_ok(pid_t pid, int pidfd) {
	char a[64], b[64];
	snprintf(b, sizeof b, "/proc/%d/status", (int)pid);
	const char *fields[] = {"Seccomp_filters", "NoNewPrivs"};
	for (unsigned i = 0; i < sizeof fields / sizeof fields[0]; i++) {
		long own = grs_status_num("/proc/self/status", fields[i]);
		long peer = grs_status_num(b, fields[i]);
		if (own < 0 || peer < 0 || peer > own) {
			return 0;
		}
	}
	int own = grs_status_words("/proc/self/status", "NSpid");
	int peer = grs_status_words(b, "NSpid");
	if (own < 1 || peer < 1 || peer > own) {
		return 0;
	}
	const char *links[] = {"ns/mnt", "ns/user", "ns/pid", "root"};
	for (unsigned i = 0; i < sizeof links / sizeof links[0]; i++) {
		struct stat sa, sb;
		snprintf(a, sizeof a, "/proc/self/%s", links[i]);
		snprintf(b, sizeof b, "/proc/%d/%s", (int)pid, links[i]);
		if (stat(a, &sa) != 0) {
			return 0;
		}
		if (stat(b, &sb) != 0) {
			if (errno == EACCES || errno == EPERM) {
				continue; // not dumpable: the status above decides
			}
			return 0;
		}
		if (sa.st_dev != sb.st_dev || sa.st_ino != sb.st_ino) {
			return 0;
		}
	}
	if (pidfd >= 0) {
		return syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0;
	}
	return kill(pid, 0) == 0;
}

// grs_request builds the request (see internal/serve's doc): "GRS1", the
// payload's length, argc and each argument, envc and each variable, the
// umask; numbers little-endian uint32. NULL when it cannot.
static char *grs_request(int argc, char **argv, char **envp, uint32_t um, size_t *len) {
	size_t size = 8 + 4 + 4 + 4;
	int envc = 0;
	for (int i = 0; i < argc; i++) {
		size += 4 + strlen(argv[i]);
	}
	for (; envp && envp[envc]; envc++) {
		size += 4 + strlen(envp[envc]);
	}
	if (size > (8u << 20)) {
		return NULL;
	}
	char *buf = malloc(size);
	if (buf == NULL) {
		return NULL;
	}
	char *p = buf;
	memcpy(p, "GRS1", 4);
	grs_put32(p + 4, (uint32_t)(size - 8));
	p += 8;
	grs_put32(p, (uint32_t)argc);
	p += 4;
	for (int i = 0; i < argc; i++) {
		size_t l = strlen(argv[i]);
		grs_put32(p, (uint32_t)l);
		memcpy(p + 4, argv[i], l);
		p += 4 + l;
	}
	grs_put32(p, (uint32_t)envc);
	p += 4;
	for (int i = 0; i < envc; i++) {
		size_t l = strlen(envp[i]);
		grs_put32(p, (uint32_t)l);
		memcpy(p + 4, envp[i], l);
		p += 4 + l;
	}
	grs_put32(p, um);
	*len = size;
	return buf;
}

// grs_committed: the server runs the request. Relay the signals a
// person sends to guardrun (relay, blocked; NULL: none), and exit as the
// server says.
static void grs_committed(int sock, sigset_t *relay) {
	int sfd = relay ? signalfd(-1, relay, SFD_CLOEXEC) : -1;
	// Relayed even when started ignored (a background job of sh), as
	// guardrun's own relay (signal.Notify) does: blocked, they are only
	// read from sfd.
	const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
	for (unsigned i = 0; sfd >= 0 && i < sizeof sigs / sizeof sigs[0]; i++) {
		signal(sigs[i], SIG_DFL);
	}
	struct pollfd pfd[2] = {{sock, POLLIN, 0}, {sfd, POLLIN, 0}};
	for (;;) {
		int n = poll(pfd, sfd >= 0 ? 2 : 1, -1);
		if (n < 0) {
			if (errno == EINTR) {
				continue;
			}
			grs_lost("poll", errno);
		}
		if (sfd >= 0 && (pfd[1].revents & POLLIN)) {
			struct signalfd_siginfo si;
			if (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
				char m[5] = {'S'};
				grs_put32(m + 1, si.ssi_signo);
				if (grs_send_all(sock, m, sizeof m) != 0) {
					grs_lost("sending a signal", errno);
				}
			}
		}
		if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			unsigned char m[5];
			if (grs_read_all(sock, m, 1) != 0) {
				grs_lost("it closed the connection before the command's exit status", 0);
			}
			if (m[0] != 'X' || grs_read_all(sock, m + 1, 4) != 0) {
				grs_lost("unexpected message", 0);
			}
			_exit((int)(int32_t)grs_get32(m + 1));
		}
	}
}

// guardrun_serve_client runs before the Go runtime (an ELF constructor;
// glibc passes argc, argv and envp). See the package doc. It returns
// unless the server took the request, having closed what it opened and
// restored the signal mask.
__attribute__((constructor)) static void guardrun_serve_client(int argc, char **argv, char **envp) {
	if (argc < 2 || argv == NULL || argv[1] == NULL || argv[1][0] != '-') {
		return;
	}
	const char *path = NULL;
	for (int i = 0; envp && envp[i]; i++) {
		if (strncmp(envp[i], "GUARDRUN_SERVER=", 16) == 0) {
			path = envp[i] + 16;
			break;
		}
	}
	struct sockaddr_un sa;
	if (path == NULL || path[0] != '/' || strlen(path) >= sizeof sa.sun_path) {
		return;
	}
	// Descriptors 0-2 must be open: else the socket or the cwd
	// descriptor would take the lowest free number and be sent as the
	// command's stdin, stdout or stderr (handing the command the
	// connection to the server). guardrun handles closed ones itself.
	for (int fd = 0; fd < 3; fd++) {
		if (fcntl(fd, F_GETFD) < 0) {
			return;
		}
	}
	// The signals guardrun relays are blocked (to be read from a
	// signalfd) only once the server has committed: until then they act
	// as on guardrun before it runs anything, so a server that does not
	// answer cannot make the client ignore ^C or a time-out's SIGTERM.
	sigset_t relay;
	sigemptyset(&relay);
	sigaddset(&relay, SIGINT);
	sigaddset(&relay, SIGTERM);
	sigaddset(&relay, SIGHUP);
	sigaddset(&relay, SIGQUIT);
	int cwd = -1;
	char *buf = NULL;
	int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (sock < 0) {
		goto fallback;
	}
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	strcpy(sa.sun_path, path);
	if (connect(sock, (struct sockaddr *)&sa, sizeof sa) != 0) {
		goto fallback;
	}
	struct ucred cr;
	socklen_t crlen = sizeof cr;
	if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) != 0 || cr.uid != geteuid() || cr.pid <= 0) {
		goto fallback;
	}
	int pidfd = -1;
	socklen_t pidfdlen = sizeof pidfd;
	if (getsockopt(sock, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &pidfdlen) != 0) {
		pidfd = -1;
	}
	int server_ok = grs_server_ok(cr.pid, pidfd);
	if (pidfd >= 0) {
		close(pidfd);
	}
	if (!server_ok) {
		goto fallback;
	}
	cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cwd < 0) {
		goto fallback;
	}
	mode_t um = umask(022);
	umask(um);
	size_t len = 0;
	buf = grs_request(argc, argv, envp, (uint32_t)um, &len);
	if (buf == NULL) {
		goto fallback;
	}
	int fds[4] = {0, 1, 2, cwd};
	union {
		char b[CMSG_SPACE(sizeof fds)];
		struct cmsghdr align;
	} ctl;
	memset(&ctl, 0, sizeof ctl);
	struct iovec iov = {buf, len};
	struct msghdr mh = {0};
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	mh.msg_control = ctl.b;
	mh.msg_controllen = sizeof ctl.b;
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof fds);
	memcpy(CMSG_DATA(c), fds, sizeof fds);
	ssize_t sent;
	do {
		sent = sendmsg(sock, &mh, MSG_NOSIGNAL);
	} while (sent < 0 && errno == EINTR);
	if (sent <= 0 || grs_send_all(sock, buf + sent, len - (size_t)sent) != 0) {
		goto fallback;
	}
	free(buf);
	buf = NULL;
	unsigned char reply;
	if (grs_read_all(sock, &reply, 1) != 0 || reply != 'R') {
		goto fallback;
	}
	close(cwd);
	// Committed: a signal that came before this was acted on already
	// (it ended the client, and with it the run); from here they are
	// relayed. Without the mask nothing is relayed, and the signals
	// keep their dispositions.
	grs_committed(sock, sigprocmask(SIG_BLOCK, &relay, NULL) == 0 ? &relay : NULL);
	_exit(125); // not reached

fallback:
	free(buf);
	if (cwd >= 0) {
		close(cwd);
	}
	if (sock >= 0) {
		close(sock);
	}
}
*/
import "C"
