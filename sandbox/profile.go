package sandbox

// Spec is the input to Derive: what the config (and the matched rules) say
// the sandbox may expose. It is built by the policy layer; every path in it
// is absolute and cleaned.
type Spec struct {
	// Zones are the config's zones.
	Zones []Zone
	// SystemRead are system directories to expose read-only. Use
	// DefaultSystemPaths for the config's `system_read: default`.
	SystemRead []string
	// Toolchains adds, read-only, the interpreters and version
	// managers installed under Home that Path uses (pyenv, nvm,
	// ~/.cargo/bin and rustup, ~/.local/bin ...; see HomeRead). The
	// config's `system_read: default` sets it.
	Toolchains bool
	// Path is the PATH the command starts with: it chooses, among the
	// layouts guardrun knows, which toolchains Toolchains shows.
	Path string
	// Deny are absolute paths never visible inside the sandbox.
	Deny []string
	// DenyNames are bare file names (".env") denied wherever they appear
	// inside an exposed tree.
	DenyNames []string
	// Network allows network access (config or the matched rule says so).
	Network bool
	// Proxy gives the command, instead of a network, a route to
	// guardrun's network proxy and nothing else (sandbox.network:
	// proxy). Ignored when Network is set.
	Proxy bool
	// Protect are guardrun's own files and directories (config files,
	// state directory with audit log, session store and trust store, the
	// supervisor socket directory). They are never writable inside the
	// sandbox; state is hidden entirely.
	Protect []Protected
	// Cwd is the working directory the command starts in.
	Cwd string
	// Home is the user's home directory (set as $HOME inside).
	Home string
	// AccountHome is the home directory of the user database's entry
	// for the user guardrun runs as ("" when unknown), which the
	// environment cannot change. $HOME can be set by what ran before (a
	// Makefile's `export HOME := $(CURDIR)/h`): when Home is not
	// AccountHome, Toolchains follows no symbolic link under it.
	AccountHome string
	// EnvDeny are globs of environment variable names dropped before the
	// command starts (secrets).
	EnvDeny []string
	// ProtectNames are relative, slash-separated names (".git/hooks",
	// ".bashrc") that are read-only wherever they appear inside a
	// writable tree, at any depth: files that something outside the
	// sandbox later runs or obeys (git hooks and config, shell startup
	// files, editor and agent settings). Callers pass DefaultProtect plus
	// the config's own relative entries. See Profile.ProtectNames.
	ProtectNames []string
	// ProtectPaths are absolute paths (the config's absolute `protect`
	// entries) read-only, and uncreatable where missing, when a writable
	// tree covers them.
	ProtectPaths []string
	// UnixSockets are absolute paths of unix sockets commands may
	// connect to (`sandbox.unix_sockets`). When empty, socket(AF_UNIX)
	// is refused.
	UnixSockets []string
}

// Zone is one config zone as the sandbox sees it.
type Zone struct {
	Name     string
	Root     string
	Writable bool
}

// Protected is one of guardrun's own paths.
type Protected struct {
	Path string
	// Hide masks the path entirely (state); otherwise it is read-only.
	Hide bool
}

// Profile is the platform-neutral sandbox: what a process inside may read,
// write and reach. Renderers (bwrap, seatbelt) turn it into a platform's
// mechanism and must never grant more than it says.
type Profile struct {
	// ReadOnly are trees visible read-only.
	ReadOnly []string `json:"read_only"`
	// ReadWrite are trees visible and writable.
	ReadWrite []string `json:"read_write"`
	// Deny are paths masked inside the sandbox: not readable, not
	// writable, not creatable. A path that does not exist yet is still
	// listed; renderers mask its first missing component.
	Deny []string `json:"deny"`
	// ReadOnlyOver are paths inside a writable tree that are re-exposed
	// read-only (guardrun's own config files).
	ReadOnlyOver []string `json:"read_only_over"`
	// MoveAfter are protected names missing when the sandbox started
	// that no placeholder can stand for: git reads .git/commondir
	// whenever it exists, so even an empty one would break every git
	// command. Whatever the command creates there is moved aside after
	// it (MoveAsideCreated).
	MoveAfter []string `json:"move_after,omitempty"`
	// Network allows sockets beyond AF_UNIX and keeps the host network
	// namespace.
	Network bool `json:"network"`
	// Proxy means no network of its own but a route to guardrun's proxy:
	// renderers give the sandbox an empty network namespace (bwrap) or
	// TCP connect to the proxy's port only (landlock), set the proxy
	// variables, and must keep the command from opening unix sockets so
	// that the proxy's socket is reachable only through that route.
	// Network is false whenever Proxy is set.
	Proxy bool `json:"proxy,omitempty"`
	// Cwd is the working directory inside.
	Cwd string `json:"cwd"`
	// Home is $HOME inside.
	Home string `json:"home"`
	// PrivateTmp gives the sandbox its own empty /tmp.
	PrivateTmp bool `json:"private_tmp"`
	// Seccomp is the system call policy.
	Seccomp SeccompPolicy `json:"seccomp"`
	// EnvDeny are globs of environment variable names dropped.
	EnvDeny []string `json:"env_deny"`
	// Symlinks are links created inside the sandbox where an exposed
	// system path is itself a symlink (/bin -> /usr/bin on merged-/usr
	// systems). The target is bound once, under its real name, so a
	// denied path has exactly one name to mask.
	Symlinks []Symlink `json:"symlinks,omitempty"`
	// Protected are guardrun's own paths (hidden or not). They are
	// listed so that Validate can prove none of them is writable.
	Protected []string `json:"protected,omitempty"`
	// ProtectNames are the names read-only at any depth inside writable
	// trees (Spec.ProtectNames), kept for renderers that can match a
	// name wherever it appears, now or later (Seatbelt's regex filters).
	// Derive has already turned every match it found into ReadOnlyOver
	// entries, so a renderer that only binds paths (bwrap, Landlock) may
	// rely on those alone; the ones it could not find (beyond the walk's
	// bound, or created during the run) are the package's Limitations.
	ProtectNames []string `json:"protect_names,omitempty"`
	// DenyNames are the bare names denied wherever they appear
	// (Spec.DenyNames), kept so that a renderer can tell a denied path
	// that comes from a name (a missing .env) from one the config lists.
	DenyNames []string `json:"deny_names,omitempty"`
	// Pinned are directories inside writable trees that lead to a
	// ReadOnlyOver or Deny entry (the .git of a protected .git/config,
	// the directory of a .env). They stay
	// writable, but must not be renamed, removed or replaced: otherwise
	// `mv .git x` would carry the read-only path away and a fresh,
	// writable one could be made in its place. bwrap binds each onto
	// itself (a mount point cannot be renamed); Seatbelt denies unlink
	// and create on them.
	Pinned []string `json:"pinned,omitempty"`
	// UnixSockets are the unix sockets a command may connect to. When
	// empty, creating an AF_UNIX socket is refused outright
	// (Seccomp.AllowUnix false); socketpair keeps working. Each is
	// exposed read-only (connecting needs no write access to the mount).
	UnixSockets []string `json:"unix_sockets,omitempty"`
	// HomeRead are the paths under the home directory shown read-only
	// for the person's toolchains (Spec.Toolchains), each with why; they
	// are among ReadOnly too.
	HomeRead []HomeRead `json:"home_read,omitempty"`
	// Warnings say where Derive had to stop short (for example the
	// bounded search for DenyNames). They never widen the profile.
	Warnings []string `json:"warnings,omitempty"`
}

// Symlink is a symbolic link at Path, pointing at Target, created in the
// sandbox's otherwise empty root.
type Symlink struct {
	Path   string `json:"path"`
	Target string `json:"target"`
}

// SeccompPolicy is the system call filter's configuration. Everything not
// listed here is fixed: the refused groups of SPEC §5 are always refused.
type SeccompPolicy struct {
	// AllowNetwork permits the IP socket families (AF_INET, AF_INET6)
	// and netlink; raw and packet sockets, MPTCP, AF_ALG, AF_VSOCK and
	// AF_TIPC stay refused.
	AllowNetwork bool `json:"allow_network"`
	// AllowUnix permits socket(AF_UNIX). Off unless the profile lists
	// UnixSockets: a host daemon whose socket is visible inside (a
	// docker.sock in a zone) could otherwise be reached. Always off with
	// Proxy: the proxy's own socket would be one connect away.
	AllowUnix bool `json:"allow_unix"`
	// HostShared says the command shares the host's pid and IPC
	// namespaces (the landlock backend sets it): SysV IPC (shared
	// memory, message queues, semaphores), which would reach the
	// objects of the user's host processes by key or id, is refused
	// with ENOSYS, as a kernel without it says; and prlimit on another
	// process (guardrun's own, whose RLIMIT_NOFILE 0 would keep it from
	// restoring protected names) with EPERM, as is changing another
	// process's scheduling (setpriority, sched_set*, ioprio_set with a
	// pid, a group or a user: SCHED_IDLE or the lowest priority would
	// starve guardrun, the keeper or every process of the user).
	HostShared bool `json:"host_shared,omitempty"`
	// InetStreamOnly, with AllowNetwork, narrows sockets to TCP:
	// socket() only for AF_INET and AF_INET6, SOCK_STREAM, protocol 0
	// or IPPROTO_TCP, and no MSG_FASTOPEN (which connects from sendto
	// and sendmsg). The landlock backend's route to the proxy, where
	// Landlock limits TCP to the proxy's port and nothing limits UDP,
	// ICMP, SCTP or netlink.
	InetStreamOnly bool `json:"inet_stream_only,omitempty"`
}
