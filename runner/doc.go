// Package runner is the one way guardrun runs an approved command: it
// takes the sandbox Profile the policy layer derived, starts argv inside
// the platform's OS sandbox (bubblewrap and seccomp on Linux, or Landlock
// and seccomp where user namespaces are unavailable; Seatbelt on macOS),
// relays SIGINT, SIGTERM, SIGHUP and SIGQUIT to the command (those this
// process receives, or with Options.Signals those a caller running many
// commands at once feeds it: `guardrun serve`), and returns its exit
// status the way sh reports it (RunWith). Choose says which sandbox can
// be built here, if any.
//
// It does not decide whether to run anything (rules and approval do), it
// does not derive or widen the profile, and it never falls back to
// running a command outside the sandbox on its own: when the sandbox
// cannot start, RunWith returns an error and the caller decides
// (fail_fast, refuse_tools). RunUnsandboxed exists only for a config that
// says require_os_sandbox: false, and only the caller chooses it. A
// script reaches RunWith as an argv for the configured shell
// (`program -c script`, built by internal/request).
//
// Each OS sandbox is a Backend value (bwrap, landlock, seatbelt: thin
// adapters here over the packages of those names, which import no
// sibling and not this package). Choose resolves sandbox.backend (auto,
// bwrap, landlock) to the backend that works here, New names one without
// checking it; the caller holds the value and asks it rather than its
// name: its check, how its commands reach the proxy (ProxyMode), whether
// they can signal outside the sandbox (ConfinesSignals), its rendering
// of a profile for guardrun profile (Describe), and the command itself
// (Command: start, signal, wait), which RunWith runs with the relay.
// What a backend keeps between commands (where its checks and compiled
// filters are remembered, landlock's state directory) is its Config;
// what one command brings (the accepted losses, the route to the proxy,
// the signals to relay) are Options, values both, never process
// globals.
//
// RunWith's guarantees: the command's status is its own (128+N for signal N);
// a relayed SIGINT, SIGTERM, SIGHUP or SIGQUIT that arrives while the
// sandbox starts is not lost: until the command's process exists it ends
// the sandbox before the command runs (128+N), after that it reaches the
// command;
// an error means the sandbox did not start; nothing of the sandbox
// outlives the calling process, even when it is killed with SIGKILL, once
// bwrap has set the sandbox up (for its first milliseconds, see the bwrap
// package's Limitations).
package runner
