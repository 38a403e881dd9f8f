// Package request is the flow every request to guardrun goes through,
// whatever front it comes in by: a command (`guardrun -c`, `guardrun --
// CMD`, each input of `guardrun shell`, each `$SHELL -c` of an agent under
// `guardrun supervise`), a file operation (`guardrun fs`), a host the
// network proxy is asked to reach.
//
// In order:
//
//  1. Open: the config is found and trusted (config.Load: --config,
//     $GUARDRUN_CONFIG, the .guardrun.yaml files above the working
//     directory, the nearest trusted one the base and each untrusted one
//     only tightening it, the user config, the embedded default; state
//     locations an environment variable put inside an rw zone refused),
//     the OS sandbox backend is chosen and checked (ChooseBackend: a
//     runner.Backend the session holds, configured with the state
//     directory; with require_os_sandbox and fail_fast and none, Open
//     fails), and the session's grant store is opened. OpenForFiles
//     skips the sandbox check: guardrun fs acts itself, after policy.
//  2. Decide: the rules and zones judge the job (allow, ask or block,
//     part by part).
//  3. Ask: the gate (approval.Gate) resolves the verdict by the mode,
//     session grants, and a person (the supervisor on $GUARDRUN_SOCKET,
//     else the terminal, or Session.Prompter).
//  4. Profile: the sandbox profile is derived from the config's zones,
//     with guardrun's own files protected (Session.Protected).
//  5. Run: under the chosen backend (runner.RunWith), or unsandboxed where
//     the config allows it (runner.RunUnsandboxed); with network: proxy, a
//     proxy for the command whose unlisted hosts go through Ask in turn.
//  6. Audit: a record before the command starts (decision, who decided,
//     sandbox, backend) and one when it ends (status, duration), sharing a
//     run id; refusals and failures are audited too (Session.Audit).
//
// Session.Run does 2 to 6 for a Job. Callers that are not commands use
// the steps they need: guardrun fs judges a path against the file zones
// itself (rules.Engine.File, refusing Session.Protected paths), then
// calls Ask and Audit; the proxy calls Ask for each unlisted host and
// Audit for each connection.
//
// internal/cli is the caller: it parses flags into Options, calls
// Open and Run, and maps the errors to exit statuses (*Refusal 77,
// *ExitStatus the command's own, anything else 125). A new entry point (an
// MCP server, say) does the same rather than copying the flow.
// internal/serve (`guardrun serve`) does it for other guardrun processes:
// OpenEnv in the client's environment and directory (config.Env.For),
// Job.PID and Via for the audit, Job.Signals for the relay, Job.Commit
// called before the first step that cannot be taken back, and
// Session.NoPerson, which makes a request that would prompt fail with
// ErrNeedsPerson before anything is recorded.
//
// # Limitations
//
//   - A Session is used by one goroutine at a time, except that the
//     proxy's host approvals (which Run starts) ask from their own
//     goroutines, one prompt at a time.
//   - Session.Loaded may be replaced between jobs (ConfigFor, on
//     `guardrun shell`'s cd) but not while one runs.
//   - The OS sandbox is checked once, at Open, for the config found
//     then; a config loaded later by ConfigFor keeps that backend.
package request
