// Package serve is `guardrun serve`'s server: one long-lived guardrun
// that runs the requests of the guardrun processes started below it, so
// that each `guardrun -c SCRIPT` (make's SHELL=guardrun, an agent's
// $SHELL) costs a small C client and a sandbox instead of a Go program
// that loads the config anew. The client (package client, imported by
// cmd/guardrun only) runs in an ELF constructor before the Go runtime
// and hands the request over; whatever the server does not take, the
// client's own guardrun runs as it always does.
//
// # Protocol (GRS1)
//
// A unix stream socket in a private (0700) directory under
// $XDG_RUNTIME_DIR, else the temporary directory, else /tmp (the first
// where the socket's path fits a sockaddr_un), named to the command
// by $GUARDRUN_SERVER. The client connects, checks with SO_PEERCRED that
// the server runs as its own effective user and (through /proc, by a
// pidfd) is confined no more than itself: the same mount, user and pid
// namespaces and root directory, no more seccomp filters, no
// no_new_privs it lacks. A command in a sandbox listening where a
// guardrun's $GUARDRUN_SERVER points (a Makefile's export) so gets no
// descriptor: the working directory's would open files outside its
// sandbox. Then the client sends one request:
//
//	"GRS1"  uint32 length of the rest
//	uint32 argc, then per argument: uint32 length, bytes
//	uint32 envc, then per variable: uint32 length, bytes (NAME=VALUE)
//	uint32 umask
//
// (numbers little-endian), with SCM_RIGHTS on its first bytes: its
// descriptors 0, 1, 2 and an O_PATH descriptor of its working directory
// (a client with one of 0-2 closed does not ask: its socket would take
// the free number and be sent as the command's stdio). This is a frame
// of package ipc (magic, length, payload), which the server reads with
// ipc.ReadFrame; its socket, directory and peer credentials are ipc's
// too. The client builds the frame in C, before the Go runtime starts,
// and reads the server's single-byte answers below, so the request
// stays binary rather than one of ipc's JSON messages; both ends are
// the same guardrun binary.
// The server answers one byte:
//
//   - 'F' (fallback), or the connection closes: nothing was done; the
//     client closes what it opened and returns from the constructor,
//     and guardrun runs the request itself.
//   - 'R' (committed): the server owns the request. Until R the client
//     leaves its signals alone (SIGINT or SIGTERM end it as they end a
//     guardrun that has not run anything yet; the server then runs
//     nothing, or ends what it started); from R on it relays
//     SIGINT, SIGTERM, SIGHUP and SIGQUIT as 'S' + int32 signal number,
//     and waits for 'X' + int32 exit status, with which it exits. If the
//     connection ends first it prints "guardrun: lost the guardrun server
//     (...)" and exits 125; if the client goes away, the server cancels
//     the command as guardrun being killed would (the sandbox ends; the
//     end record is written).
//
// The command's output goes straight to the client's descriptors; the
// server writes guardrun's own messages to the client's stderr.
//
// # What the server takes
//
// The server first checks the peer: the same user (SO_PEERCRED), and
// not confined more than the server, read from /proc through a pidfd
// (SO_PEERPIDFD): the same mount, user and pid namespaces, the same
// root directory (no chroot), the same uids, gids and supplementary
// groups (a command gets the server's), no more seccomp
// filters and no no_new_privs the server lacks. A client inside
// a guardrun sandbox fails this (bwrap's namespaces, landlock's seccomp
// filter and no_new_privs), and the server closes the connection
// without reading the request: a sandboxed command never gets a fresh
// sandbox from the config. The socket's directory is also hidden in
// every sandbox, and GUARDRUN_SERVER is removed from every command's
// environment.
//
// It then answers F unless the request is one guardrun's run forms
// (`-c SCRIPT [ARGV0 ARG...]` with sh-style options, `-- CMD`, with the
// common flags; parsed by the CLI's own parser) and everything that
// shapes guardrun beyond the request is what the server already has:
// HOME, XDG_* and GUARDRUN_* set as for the command served
// (Config.Environ: `guardrun serve`'s CMD, `guardrun supervise`'s
// agent), no GUARDRUN_TRACE, the same umask; the same terminal session
// unless the session is named (--session, $GUARDRUN_SESSION); a
// relative $GUARDRUN_CONFIG only with the server's working directory; a
// working directory it can name; a config that loads, with an OS sandbox
// that keeps the command's signals inside (runner.Backend's
// ConfinesSignals: bwrap, or landlock with its signal scope), without
// network: proxy. GUARDRUN_SERVER itself and
// GUARDRUN_SOCKET are not compared: the supervisor sets the latter for
// its agent after the server starts, and a request reads it from the
// client's environment only (to hide its directory, and to see that a
// person would be asked through it, which makes the request the
// client's). HOME and XDG_* must be the server process's own too: they
// chose its state directory and caches for its lifetime. A PATH may
// differ where it finds the same bwrap as the server's. Once the
// server's executable is no longer the file at the path it started from
// (guardrun upgraded), every request is answered F: the clients are the
// new guardrun, and under landlock the old server could not start its
// trampoline from the deleted file. A request that would need a person (interactive mode,
// an ask the session's grants do not cover) is answered F before
// anything is recorded, and the client's guardrun asks as always.
//
// A served request goes through request.Session.Run as `guardrun -c`
// does, in the client's working directory and environment, and its exit
// status and messages come from the CLI's own mapping. Its audit records
// are the same but for "via": "server" and the pid, which is the
// client's.
//
// # What is remembered between requests
//
// Nothing that decides a request. Each one loads the config as a
// guardrun started in the client's working directory would: it walks up
// for .guardrun.yaml files and reads them, the user config,
// $GUARDRUN_CONFIG's file and the trust store, and resolves every path
// it checks, anew. So a project file created since the last request, a
// user config rewritten (even with its size and modification time kept),
// a file trusted or no longer trusted, another repository or a directory
// swapped for a link is obeyed by the next request. What is remembered,
// for the process's lifetime (in package rules, bounded to 32 files and
// 8 MiB in all; a config that decodes to more is not kept), is the
// decoding of a config file's text: the same file name, bytes
// (SHA-256), directory and home, working and state directories decode to
// the same config, which depends on nothing else (where its roots lead is
// resolved by each load), so those bytes are not decoded again; each load
// gets its own copy. Within one load, each path is resolved once.
//
// # Limitations
//
//   - The command inherits the server's nice value, scheduling
//     attributes, controlling terminal (bwrap gives it a new session
//     either way) and ignored signals, not the client's. Resource
//     limits, cgroups, uids, gids and groups and the LSM label
//     (/proc/PID/attr/current) are the server's too, which is why a
//     client with other ones is not served (F): a served command would
//     escape a `ulimit -f`, a cgroup's limits or an AppArmor profile its
//     client is held to. Only RLIMIT_NOFILE's soft limit (Go raises
//     its own), RLIMIT_RTPRIO and RLIMIT_NICE (lowered for every
//     command anyway) are not compared. A Landlock domain that comes
//     without a seccomp filter or no_new_privs the server lacks (another
//     tool's, under a server that has no_new_privs itself) is not seen:
//     /proc does not show Landlock domains. Everything else a command
//     sees (argv, environment, descriptors 0-2, working directory,
//     umask) is the client's. Other descriptors the client has open are
//     not passed.
//   - The server's descriptors are shared by its concurrent runs: when
//     its limit (RLIMIT_NOFILE) is reached, served runs fail (125) where
//     separate guardrun processes would not; when it cannot accept any
//     more, it stops listening and its clients run the usual way.
//   - A config that runs commands unsandboxed (require_os_sandbox:
//     false, or refuse_tools without a sandbox) or uses network: proxy
//     is left to the client: the unsandboxed runner relays the process's
//     own signals, and the proxy asks for hosts while the command runs.
//   - Under landlock, each served command is started from a thread of
//     the server's own that restricts itself (never the main thread; it
//     lives as long as the command and then ends), as guardrun does for
//     its one command; the main thread, which the peer check compares
//     clients with, stays unrestricted.
//     Where Landlock lacks the signal scope (ABI 6; the config accepts
//     losing it), landlock requests are answered F: the command could
//     stop or kill the server and every other client's run with it.
//     (Untested: the test machine's kernel has the scope.)
//     Its first landlock run makes the server not dumpable, as it makes
//     guardrun (so that a command cannot read the server's memory and
//     environment through /proc), for the rest of its life.
//   - A server that is stopped (SIGSTOP) or hangs stalls its clients
//     before they get an answer: a client cannot give up and run the
//     request itself, since the server may have taken it. ^C or a
//     time-out's SIGTERM still ends such a client, as it ends a guardrun
//     that has not run anything yet.
//   - Without SO_PEERPIDFD (Linux before 6.5) the peer check reads /proc
//     by the pid SO_PEERCRED gives, checked to be alive afterwards; a pid
//     reused in between could pass it.
//   - A run that takes the client's stdin as a terminal gets the
//     terminal, but the server is not in the terminal's foreground
//     process group; as for guardrun, the sandbox has its own session.
package serve
