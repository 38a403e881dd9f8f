package rules

import (
	"time"
)

// Mode is how asks are resolved.
type Mode string

const (
	ModeInteractive Mode = "interactive"
	ModeApproveAll  Mode = "approve-all"
	ModeStrict      Mode = "strict"
)

// ZoneMode is a zone's access inside the sandbox.
type ZoneMode string

const (
	ReadOnly  ZoneMode = "ro"
	ReadWrite ZoneMode = "rw"
)

// Fallback is what happens when no OS sandbox can be applied.
type Fallback string

const (
	FailFast    Fallback = "fail_fast"
	RefuseTools Fallback = "refuse_tools"
)

// Backend is the Linux OS sandbox backend.
type Backend string

const (
	BackendAuto     Backend = "auto"
	BackendBwrap    Backend = "bwrap"
	BackendLandlock Backend = "landlock"
)

// LandlockAcceptNames are the values of sandbox.landlock_accept (the
// landlock package's Accept* names).
var LandlockAcceptNames = []string{"deny_create", "truncate", "scope", "tcp_ports", "unix_sockets"}

// Config is a loaded, validated guardrun configuration. Paths in it are
// absolute and cleaned; ~ is expanded.
type Config struct {
	// File is where the config came from: a path, or "(embedded default)".
	File string
	// Dir is the directory relative roots were resolved against.
	Dir     string
	Mode    Mode
	Shell   Shell
	Sandbox Sandbox
	Audit   Audit
	Session Session
	// Checkpoints bounds the checkpoints taken before requests that may
	// write a zone.
	Checkpoints Checkpoints

	defaultAudit string
}

// Shell is the shell policy.
type Shell struct {
	// Program runs approved scripts; the parser dialect follows it.
	Program string
	Default Action
	Rules   []Rule
	// Tightening are rules from an untrusted project config. They can
	// only make a verdict stricter: a command's verdict is the stricter of
	// what Rules say and what the first matching tightening rule says.
	Tightening []Rule
	Examples   Examples
}

// Action is what a rule (or the default) says.
type Action struct {
	Allowed  bool
	Approval bool
	// Checkpoint is what the pre-approval says of the checkpoint taken
	// before the command runs.
	Checkpoint Checkpoint
}

// Checkpoint is what a rule says of the checkpoint of the writable
// zones taken before a command it matched runs.
type Checkpoint string

const (
	// CheckpointBestEffort (the default): a checkpoint is taken before
	// a request that may write a zone; one that cannot be taken is a
	// warning.
	CheckpointBestEffort Checkpoint = ""
	// CheckpointRequired: the pre-approval relies on undo. Where no
	// checkpoint can be taken the request asks (strict mode refuses it).
	CheckpointRequired Checkpoint = "required"
	// CheckpointNone: the command writes no zone; no checkpoint is taken
	// for it.
	CheckpointNone Checkpoint = "none"
)

// Checkpoints is the checkpoints section: what one zone's checkpoints
// may hold and keep. Keep the defaults in sync with the README's config
// reference.
type Checkpoints struct {
	// Enabled is false when no checkpoint is ever taken (then a rule
	// with checkpoint: required always asks).
	Enabled bool
	// MaxFiles and MaxBytes bound a zone's files, MaxFileBytes one
	// file, MaxStoreBytes the zone's store; Keep is how many
	// checkpoints of a zone are kept.
	MaxFiles      int
	MaxBytes      int64
	MaxFileBytes  int64
	MaxStoreBytes int64
	Keep          int
	// given is set when the file has a checkpoints section.
	given bool
}

// DefaultCheckpoints is the checkpoints section of a config that has
// none.
func DefaultCheckpoints() Checkpoints {
	return Checkpoints{Enabled: true, MaxFiles: 50_000, MaxBytes: 2 << 30, MaxFileBytes: 100 << 20, MaxStoreBytes: 4 << 30, Keep: 200}
}

// Rule is one shell rule. First match wins.
type Rule struct {
	Pattern      string
	Action       Action
	Description  string
	SandboxPaths []string // zone names
	// CodeIn (code_in) narrows the rule to commands that run code (a
	// script, a Makefile, package.json's scripts, a program of
	// node_modules/.bin, a program named by its path, code on the
	// command line) whose every file lies inside these zones; the
	// pre-approval then covers running that code (projectcode.go).
	CodeIn  []string // zone names
	Network bool
	// Loopback (network: loopback) narrows the rule to commands whose
	// every destination (curl's and wget's URLs) is a port of the
	// host's loopback that sandbox.domains.loopback lists, under
	// sandbox.network: proxy (loopback.go).
	Loopback bool
	// Words is Pattern split by the shell parser; each is a glob.
	Words []string
	// At is where the rule was written, "file:line:col".
	At string
}

// Examples are verdict checks run by `guardrun check`.
type Examples struct {
	Allow []Example
	Ask   []Example
	Block []Example
}

// Example is one example script and where it was written.
type Example struct {
	Script string
	At     string
}

// Zone is a directory tree the sandbox exposes.
type Zone struct {
	Name           string
	Root           string
	Mode           ZoneMode
	WriteApproval  bool
	ReadApproval   bool
	DeleteApproval bool
	// Suffixes, when non-empty, are the only file suffixes that may be
	// written in the zone.
	Suffixes []string
	At       string
}

// SystemRead selects the system directories visible read-only.
type SystemRead struct {
	// Default means the built-in list (/usr, /bin, /lib*, /etc, /opt ...).
	Default bool
	// Paths is an explicit list (Default false). Empty with Default false
	// means none.
	Paths []string
}

// Sandbox is the sandbox section.
type Sandbox struct {
	Zones      []Zone // in file order
	SystemRead SystemRead
	// Deny entries are absolute paths, or bare names (no slash) that match
	// a file or directory of that name anywhere.
	Deny []string
	// Network is `network: true`: the host's network, unfiltered.
	Network bool
	// Proxy is `network: proxy`: every command reaches the network only
	// through guardrun's proxy, host by host as Domains says.
	Proxy            bool
	Domains          Domains
	RequireOSSandbox bool
	Fallback         Fallback
	// Backend is the Linux OS sandbox: auto (bwrap where user
	// namespaces work, else landlock), bwrap or landlock.
	Backend Backend
	// LandlockAccept are the parts of a profile the landlock backend may
	// leave unenforced (LandlockAcceptNames); any other part it cannot
	// enforce refuses the command.
	LandlockAccept []string
	// EnvDeny are globs of environment variable names never passed into
	// the sandbox.
	EnvDeny []string
	// Protect are the config's own `protect` entries, added to
	// sandbox.DefaultProtect: relative names (".git/hooks") read-only at
	// any depth inside rw zones, or absolute paths (cleaned, ~ expanded).
	// A write to one asks.
	Protect []string
	// UnixSockets are absolute paths of unix sockets commands may
	// connect to; none by default.
	UnixSockets []string
}

// Audit is the audit log section.
type Audit struct {
	Path string
}

// Session is the session memory section.
type Session struct {
	TTL time.Duration
}

// ZoneByName returns the zone with that name.
func (c *Config) ZoneByName(name string) (*Zone, bool) {
	for i := range c.Sandbox.Zones {
		if c.Sandbox.Zones[i].Name == name {
			return &c.Sandbox.Zones[i], true
		}
	}
	return nil, false
}
