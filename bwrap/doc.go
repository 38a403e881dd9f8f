// Package bwrap renders a sandbox.Profile as a bubblewrap (bwrap) command
// line and runs commands under it: user, pid, ipc, uts, cgroup and (without
// network) net namespaces, a fresh /proc, a minimal /dev, a private /tmp,
// the profile's trees bound read-only or read-write, its denied paths
// masked, / itself read-only, no capabilities, no controlling terminal,
// and a seccomp filter (package seccomp) loaded by bwrap just before the
// command starts.
//
// Args is pure: the same profile, descriptors and Stat give the same argv
// (golden files in testdata). It decides nothing about policy; what is
// exposed, denied or writable comes from the Profile, and Args never
// renders more than Profile.Access allows. Only exec_linux.go and its
// helpers start processes; they do not evaluate rules or ask anyone.
// Command takes what it needs besides the profile as a value (Config:
// where compiled filters are kept, the route to the proxy); the command's
// environment and the placeholder rule are package sandbox's, shared with
// the landlock backend, which imports nothing from here.
//
// Masking works by mounting over a path: an empty read-only tmpfs on a
// denied directory, a /dev/null bind (on a nodev mount, so neither
// readable nor writable) on anything else. A denied path that does not
// exist yet is masked at its first missing component when a sandboxed
// process could create it (its parent is writable inside); that needs a
// mount point, an empty read-only sticky directory (a placeholder) which
// Command creates, and which the last sandbox using it removes; a
// placeholder stands for the missing path in every run that masks it or
// a path below it.
//
// Signals: bwrap's init does not relay signals, and a signal to bwrap
// itself ends the sandbox with SIGKILL. Cmd.Signal therefore delivers to
// the sandbox's process group, found through bwrap's --json-status-fd,
// so the command can handle SIGINT and SIGTERM as it would at a terminal.
// Until the init has forked the command's process (seen in /proc before
// the group is signalled) the group holds at most the init, which as pid
// 1 of its namespace drops the signal: Cmd.Signal kills the init instead,
// the command never runs, and Wait reports 128+sig.
//
// With Profile.Proxy (sandbox.network: proxy) the sandbox gets an empty
// network namespace and its first process is guardrun's hidden bridge
// verb (BridgeArgv), bound read-only at /.guardrun/guardrun with the
// proxy's unix socket beside it: it hands a loopback listener to the
// proxy, applies the command's own seccomp filter (fd 5, refusing unix
// sockets) and executes the command. bwrap's filter is the profile's
// with socket(AF_UNIX) allowed for the bridge. See docs/network.md.
//
// A verified command (Config.Verify, run-time verification of a
// pre-approved request) starts behind a helper: guardrun's own binary,
// bound read-only at the same place, started as "EXE notify.HelperArg
// FILTER-FD SOCKET-FD ARGV..." (seccomp/notify's helper, an ELF
// constructor that runs before the Go runtime): it loads the verified filter (fd 6)
// with a listener, stacked on bwrap's, sends the listener over an
// inherited socketpair (fd 7), waits for guardrun to serve it and execs
// the command, holding nothing after. guardrun serves every exec and
// write-like call (notify.Verifier) resolving paths inside the sandbox's
// root. bwrap is forked from a thread kept until the sandbox ends: its
// --die-with-parent is the kernel's parent-death signal, sent when the
// thread that forked bwrap ends, not the process.
//
// # Limitations
//
//   - A denied path that does not exist when the sandbox starts and lies
//     in a read-only tree is not masked: the sandbox cannot create it, but
//     if the host creates it during the run, it is visible inside.
//   - DenyNames beyond the zone roots and the working directory are masked
//     only where they exist: a sandboxed command can create a new .env in
//     another directory of a writable zone (the rules layer blocks such
//     writes when it can see them).
//   - Mount-based masks can be undone from the host: deleting a mask's
//     mount point on the host detaches the mask inside. Placeholders are
//     left behind if guardrun is killed with SIGKILL, until the next
//     command that masks the same path ends.
//   - With the network on, the sandbox shares the host's network
//     namespace, including services listening on localhost and its
//     abstract unix sockets (D-Bus, X11); the latter are out of reach only
//     because the seccomp filter refuses socket(AF_UNIX) there.
//   - Protected names (Profile.ReadOnlyOver from sandbox.protect) are
//     bound read-only when the sandbox starts; a missing one is masked by
//     an empty read-only directory, and the directories above each are
//     bound onto themselves (Profile.Pinned) so they cannot be renamed
//     away. Names created during the run where nothing was masked (the
//     hooks of a repository the command itself initialises) are writable
//     until the command ends: binds are fixed at start and the filter
//     cannot look at paths. The directories above a denied path inside
//     a writable tree are pinned the same way: masks are mounted by path,
//     so a directory moved aside between the profile's walk and the
//     mounts (an empty decoy left at its name) would carry its denied
//     file away unmasked.
//   - Hard links to denied files placed inside a zone beforehand are not
//     masked (masks are by path).
//   - Killed during bwrap's own setup (its first few milliseconds),
//     guardrun leaves the sandbox to run the command to its end without
//     a parent: bwrap arms --die-with-parent in its monitor only after
//     the clone and in the sandbox's init only after setup (bubblewrap
//     issue #633). The command stays confined. guardrun does not kill the
//     monitor itself when it dies (no Pdeathsig): a monitor killed before
//     it releases the init leaves the init blocked for ever, holding the
//     command's stdout and stderr (a caller reading them would hang).
//     bwrap still has a window where that happens: between its monitor's
//     prctl(PR_SET_PDEATHSIG) and its write that releases the init, it
//     writes the status record and reads namespace ids; about 3 of 41
//     kills made every 4 ms through guardrun's first 160 ms hit it on a
//     loaded 2-core machine (TestRunKilledEarly ends those inits).
//     Signals and cancellation from guardrun itself never take that path
//     (Cmd.Signal).
//   - A relayed signal reaches the sandbox's process group only, as
//     Ctrl-C at a terminal reaches its foreground job: a command that
//     leaves the group (setsid, setpgid) does not get it and runs on,
//     and its status is its own.
//   - Paths are checked when the profile is derived and again when the
//     argv is rendered, not when bwrap mounts them: a concurrent process
//     that swaps a directory for a symlink in between can move a mask or
//     make the sandbox fail to start.
//   - With the proxy, a zone rooted at / (read-only) leaves no room for
//     /.guardrun and the sandbox fails to start.
//   - bwrap 0.8 or later is required (--disable-userns); Check says so.
//   - A command that cannot be executed (not found inside) is reported as
//     a sandbox that did not start; bwrap prints why on stderr.
package bwrap
