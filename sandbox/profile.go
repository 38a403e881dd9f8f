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
	// EnvDeny are globs of environment variable names dropped before the
	// command starts (secrets).
	EnvDeny []string
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
	// AllowNetwork permits socket families other than AF_UNIX.
	AllowNetwork bool `json:"allow_network"`
	// DenyUnixSockets refuses socket(AF_UNIX) (socketpair stays): with
	// the proxy, the command must not reach the proxy's unix socket, or
	// any other, except through the loopback route.
	DenyUnixSockets bool `json:"deny_unix_sockets,omitempty"`
}
