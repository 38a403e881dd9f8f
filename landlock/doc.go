// Package landlock is guardrun's second Linux backend: it enforces a
// sandbox.Profile with the Landlock LSM, the seccomp filter of package
// seccomp, no_new_privs and no capabilities, applied to the command alone, with no
// namespaces and no privileges. It runs where bwrap cannot (user
// namespaces disabled: Docker's default profile, Ubuntu 24.04's AppArmor
// restriction, CI runners).
//
// Build is pure apart from looking at the host file system: Profile →
// Ruleset (rules, handled rights, scopes, TCP ports), or an
// *UnenforceableError listing what Landlock cannot enforce and the
// config has not accepted losing (Options.Accept, AcceptNames). Command,
// configured by a value (Config: the accepted losses, TCP ports or the
// proxy's address, where compiled filters are kept, guardrun's state
// directory), Start and Wait (exec_linux.go) apply it: the ruleset and
// the filter go on one OS thread that is never returned to the Go
// scheduler, and the command is started from that thread, so it inherits
// them while guardrun itself stays unrestricted. Every file system right the ABI
// knows is handled in one ruleset, so what no rule grants is refused and
// renames across directories are judged by both sides (REFER).
//
// System calls Landlock cannot judge are served by guardrun in user
// space: Cmd.Notify is the command's notification registry (package
// seccomp/notify); every name it holds when Start runs is routed to
// user space by the command's seccomp filter, which is then loaded with
// a listener, and answered by its handler, in guardrun, until Wait.
// To add one, call Cmd.Notify.Handle("name", handler) between Command and
// Start; the handler emulates the call (never lets the kernel carry on
// with arguments the caller could change) and returns its result.
//
// How the profile maps (docs/backends.md has the full table):
//
//   - read-only trees: execute, read, list; read-write zones: every right
//     but creating device nodes;
//   - a denied or read-only path inside a more permissive tree: the tree
//     is not granted whole; the directories on the way get "list" only
//     and every other entry is granted on its own (Ruleset.Fixed lists
//     the writable directories this affects). Their entries are served
//     (Ruleset.Served, dirs_linux.go): the calls that create, remove or
//     rename a name are routed to guardrun, which makes them on a thread
//     restricted by the command's ruleset plus, on the served directories
//     alone, the rights to change their entries (never to read or write
//     them), refusing the names each keeps (Served.Keep) and the profile's
//     denied and protected names, case-folded, and any other name for a
//     kept object; every other such call is made on a thread restricted
//     by the command's ruleset alone. A new file there is one of PoolSize
//     unnamed files (O_TMPFILE) made before the command with rules of
//     their own; a new directory one of DirPoolSize made in the state
//     directory (same mount), so that the command uses them as any in the
//     zone;
//   - a verified command (Config.Verify): its execs and writes are
//     routed to guardrun too (notify.Verifier), through the same
//     registry (one listener per task) and the same threads; the
//     command starts behind notify's helper, which loads that filter
//     after its own exec, so that guardrun never answers a call of a
//     child it is still forking (Go's vfork holds a P of the runtime
//     until the exec, and a collection waits for every P);
//   - protected names (.git/config, .git/hooks, .bashrc, .vscode, ...)
//     and missing denied names (.env) inside writable trees: not by
//     rules (that would fix the workspace root and every .git) but
//     restored after the command (Ruleset.Watch, restore_linux.go):
//     snapshot before (files; directory trees up to MaxWatchEntries and
//     MaxWatchBytes, names and links' targets counted as bytes too,
//     larger ones keep the rules, as does what would take
//     one command's snapshots past MaxWatchTotal; paths that hold more
//     together when read, missing or grown since, refuse the command
//     at the path that crosses it, read once, before the next is read),
//     and after the command
//     what was changed, replaced, removed or hard-linked is put back and
//     what was created is moved aside to NAME.guardrun-quarantine-TIME,
//     one stderr line each, without following any link (directories on
//     the way the command made read-only or unsearchable are opened up
//     for the restore and given their modes back; when no copy can be
//     put back, a full disk, the command's version is still moved
//     aside and nothing is left at the path). Commands that run at
//     the same time share one snapshot of a path they both watch
//     (takeHeld): in memory within one process, and across guardrun
//     processes of the user through the state directory (Config.StateDir,
//     share_linux.go): per path a lock file every running command
//     holds shared, which also stores the snapshot; a path is read only
//     when no command holds it (taken exclusively, under one mutex
//     file), else the stored snapshot is used. A command that watches
//     protected names is refused without a state directory, or with
//     one not private to the user or within the command's reach;
//   - private /tmp: a per-command directory as TMPDIR, removed after;
//     guardrun holds a lock file beside it (flock) while it may be in
//     use, and each landlock command sweeps the directories of this
//     user whose lock is free (left by a guardrun killed with SIGKILL)
//     from the same temporary directory, following no link;
//   - pid isolation: scoped signals and abstract unix sockets (ABI 6), a
//     session of its own, and when the command exits every process left
//     in its domain is killed from the restricted thread (kill(-1) limited
//     by the signal scope);
//   - guardrun itself out of the command's reach: with the signal scope
//     the command runs in a Landlock domain nested below the restricted
//     thread's (nest_linux.go): the child execs guardrun's own executable
//     (/proc/self/exe, granted execute and read) with a private marker
//     argument, and a C constructor that runs before the Go runtime
//     (nest_cgo_linux.go) restricts itself with a scope-only ruleset and
//     execs the command, or exits 126 (127: not found) without running
//     it. A domain cannot signal its parent domain, so no signal of the
//     command reaches the thread; the thread's kill(-1) still reaches
//     the command. The thread is never guardrun's main thread;
//   - inotify watches (WatchCalls), which Landlock does not check:
//     served by guardrun (watch_linux.go), which opens what the command
//     named as its kernel would, judges the real path with
//     Ruleset.Watchable (the profile's read access, or $TMPDIR) and adds
//     the watch to the command's own instance (pidfd_getfd) on the
//     object it holds; elsewhere EACCES;
//   - file metadata (chmod, chown, utime, setxattr, removexattr and
//     their f/l/at forms, MetadataCalls), for which Landlock has no
//     rights: served by guardrun (metadata_linux.go), which reads the
//     path once, opens the object itself (O_PATH, O_NOFOLLOW where the
//     call does not follow), judges its real path with
//     Ruleset.MetadataWritable (the profile's write access, or $TMPDIR)
//     and makes the call on its own descriptor, on a thread without
//     capabilities; refused with EACCES, as Landlock refuses writes.
//     For both, the real path is the kernel's name of the object only
//     if, opened again in guardrun's mount namespace without following
//     links, it leads to the same inode: an object reached through
//     another namespace (/proc/PID/root of a container's process) is
//     named by its path there, which can be a zone's (realPath);
//   - network off: the seccomp filter, and TCP handled with no port
//     allowed (ABI 4). Options.ConnectTCP is the hook for a local proxy:
//     connect only to the listed ports.
//
// # Limitations
//
//   - Names stay visible: a denied entry is listed in its directory
//     (unreadable, unwritable); other processes are listed in /proc with
//     their command lines (Landlock's ptrace rules keep their environment,
//     memory and descriptors out of reach).
//   - Protected names are restored after the command, not kept
//     read-only while it runs: during the run the command can change
//     them, and a host process reading them in that window (an editor, a
//     git run outside the sandbox) sees the change. The end state is
//     enforced; guardrun profile says so. A protected directory renamed
//     away with its parent (mv .git x) keeps its new name (x is the
//     user's data); what is at the protected path is put back.
//   - A writable directory that holds an existing denied name, guardrun's
//     own config or a protected directory beyond the snapshot bound has
//     its entries served: each create, remove and rename there (and every
//     open with O_CREAT, which the filter cannot tell by directory) is a
//     round trip to guardrun. PoolSize new files per file system there
//     (and in directories made there past DirPoolSize, or without a state
//     directory on the same mount) can be opened again; past them new
//     files there are refused, said once after the command (Cmd.Notes).
//     A move or link into a served directory of an object without a rule
//     of its own, or between a served directory and one beneath it that
//     is not served, is EXDEV (mv and cp copy). The kept names and the
//     denied and protected names are refused there case-folded: a missing
//     protected name is refused rather than moved aside after.
//   - A deny path of the config (not a name) that does not exist, in a
//     writable directory whose entries are not served, cannot be kept from
//     being created: refused unless deny_create is accepted.
//   - Protected names created during the run where none was expected (the
//     hooks of a repository the command itself initialised) are reported,
//     not restored, as under bwrap (sandbox.Profile.CreatedProtected).
//   - Commands that run at the same time in one tree and watch the same
//     protected path share its snapshot only when their guardruns name
//     the same state directory and run as the same user: others (a
//     different XDG_STATE_HOME) each read the path at their start, and
//     one starting after another changed it restores that change when
//     it ends. A command that would watch a path inside a directory
//     a running command watches whole, or a directory holding a path
//     one watches, is refused (different protect lists, or a tree a
//     running command reshaped: .git made a gitfile). A reader that
//     finds the path's last holders gone in the instant between its
//     two lock tries uses their stored snapshot (what they restored
//     to), undoing a host edit made in that instant (moved aside, not
//     lost). The lock files (one per path ever watched and one per
//     directory above one, a snapshot over 64 KiB truncated by its last
//     holder) are never removed. A command that reshapes the tree
//     (.git made a gitfile) makes the commands that start while it
//     runs refused. The restore builds each copy beside the protected
//     name before it swaps it in: a process in the tree that no shared
//     snapshot covers (a bwrap command, a guardrun with another state
//     directory) can write into the copy then, or keep it open, and
//     change the restored file; a landlock command of the same state
//     directory has its own change undone by its own restore.
//   - If guardrun itself is killed with SIGKILL, nothing restores (its
//     locks on the protected names go with it: the next command reads
//     them as they are, the change included). Before
//     ABI 6 (scope accepted) processes the command left running are not
//     ended and could change a protected name after it was restored.
//   - /tmp is not visible at all (only $TMPDIR): programs that write to a
//     fixed /tmp path fail with EACCES.
//   - The per-command $TMPDIRs and their lock files live in guardrun's own
//     temporary directory ($TMPDIR of guardrun's environment): when that
//     lies in an rw zone (`export TMPDIR := $(CURDIR)/t` in a Makefile),
//     a command there can reach the other commands' $TMPDIRs beside its
//     own, and free a live one to the next sweep. The sweep itself stays
//     in the directory it opened, even if that is swapped for a link.
//   - No new terminals: /dev/ptmx and /dev/pts are the host's (a rule on
//     /dev/pts would reach the person's other terminals), so script,
//     expect or a pty test suite fail; the command's inherited stdio may
//     be a terminal.
//   - Landlock matches ports, not addresses: ConnectTCP allows the port
//     on every host; with the network off the seccomp filter refuses
//     non-unix sockets anyway, and with the proxy (Config.Proxy) guardrun
//     serves connect(2) itself and lets only the proxy's address through.
//   - Landlock (ABI 7) has no right for connecting to a pathname unix
//     socket: the seccomp policy decides. With none listed, socket(AF_UNIX)
//     is refused; a profile listing sockets (sandbox.unix_sockets) is
//     refused unless the config accepts losing the limit (unix_sockets):
//     every socket whose path the command can name is reachable then.
//   - If guardrun is killed with SIGKILL, the command's keeper (the
//     trampoline, which stays in the outer domain as the command's
//     parent) runs kill(-1) in the domain (only if, at its start, its
//     parent guardrun refused its null signal: the scope is in force;
//     the trampoline run from anywhere else never does); without the signal scope
//     (below ABI 6, no keeper) the command gets SIGKILL but its own
//     children are not ended. The changes to protected names are left
//     as they are then (nothing restores them); the command's $TMPDIR
//     stays until the next landlock command of the same user, with the
//     same temporary directory, sweeps it. Directories an older guardrun
//     left (no lock file beside them) are not swept: nothing tells them
//     from one in use.
//   - The command's RLIMIT_NPROC (soft and hard) is guardrun's minus 64
//     (the keeper lowers it): the limit counts every process and thread
//     of the user, and a command forking up to it made guardrun abort
//     (no thread) before restoring protected names. Root, or an
//     unlimited RLIMIT_NPROC, has no such count: a fork bomb then
//     exhausts the machine's pids under either backend (no cgroup).
//   - The command's RLIMIT_RTPRIO is 0 and its RLIMIT_NICE at most 20
//     minus the keeper's nice value (soft and hard; the keeper lowers
//     them): where the user's limits allow a real-time policy or a lower
//     nice value, the command taking them would starve guardrun and the
//     keeper as surely as lowering theirs. (Both are 0 by default.) Under
//     bwrap the sandbox keeps guardrun's limits.
//   - Metadata calls cost a round trip to guardrun (tens of
//     microseconds). Metadata of protected names cannot be changed during
//     the run. Processes guardrun cannot read (undumpable, or out of its
//     tree under Yama ptrace_scope 1) get EPERM for them; if guardrun
//     dies they get ENOSYS. guardrun under another seccomp listener
//     cannot use this backend (EBUSY, refused with a message), and the
//     command cannot use seccomp user notification itself.
//   - prlimit on another process is refused by the filter (it could
//     reach guardrun's own limits), and so is changing another process's
//     scheduling (setpriority, sched_setscheduler, sched_setparam,
//     sched_setattr, sched_setaffinity, ioprio_set with a pid other
//     than 0, a process group or a user): Landlock does not scope them,
//     and SCHED_IDLE or one CPU would starve guardrun, the keeper or any
//     process of the user. A thread's own id is refused too
//     (pthread_setschedparam, pthread_setaffinity_np get EPERM). guardrun is made non-dumpable, so
//     its memory and environment are out of reach of the restricted
//     thread's domain. Built without cgo, the binary has no trampoline
//     and refuses to start commands under ABI 6 (below it signals are
//     not scoped and the command is started directly).
//   - No IPC namespace: SysV IPC and POSIX message queues are refused
//     outright (ENOSYS), so a program that needs them (PostgreSQL)
//     fails under landlock.
//   - No network namespace: with the network on, bind(2) is served by
//     guardrun (AbstractBind), which refuses abstract unix names and
//     unix paths and binds the rest on a pidfd_getfd duplicate; where
//     pidfd_getfd is refused every bind fails (EPERM). With
//     unix_sockets accepted the kernel binds, abstract names included.
//   - Landlock has no right for reading metadata: stat, readlink,
//     access, getxattr and listxattr (and their at forms) reach files
//     outside every zone, so their names, sizes, times, link targets and
//     extended attribute values are readable; their contents are not.
//   - inotify_add_watch (WatchCalls) is served by guardrun only where
//     pidfd_getfd works; where it is refused (Docker's default profile)
//     the call is left to the kernel, and a command can watch
//     directories outside the zones (names only). A watch on a readable
//     directory reports events on the denied names in it (names only),
//     and the user's inotify limits are shared with the host.
//   - Rules are opened when the command starts: a path swapped for a
//     symlink between Build and Start is skipped (never followed).
//   - With the signal scope every command costs one more exec (guardrun's
//     own binary as the trampoline, about a millisecond; no Go runtime).
//     If guardrun's executable was removed while it runs (an upgrade
//     that replaces the file), its file may not be granted any more and
//     commands then fail to start (exit 125), never run unnested, until
//     guardrun is restarted.
//   - Before ABI 6 signals and abstract sockets are not scoped and
//     leftovers are not ended; before ABI 3 read-only files can be
//     truncated; such profiles are refused unless the loss is accepted.
package landlock
