// Package rules is guardrun's policy: the config schema and its strict
// loader, rule matching, file zones, and the verdict (allow, ask or block)
// for a script, an argv or a file operation; and sandbox.domains, the
// verdict for a host the network proxy is asked to reach (HostVerdict).
//
// With the verdict it predicts what the request may do (predict.go):
// for each part, the programs it may execute and the paths it may write
// (Part.MayExec, MayWrite), and whether the analysis bounded it; a
// request that is allowed and bounded in every part is Verified, and
// Decision.Prediction is what the run-time filter checks it against.
//
// It decides and never acts: it does not prompt, run, or sandbox anything,
// and imports no process or pty packages (internal/layers keeps it so). The
// only file system access is reading the config, resolving symlinks in
// paths, so that a zone is chosen for the path the kernel would reach, and
// looking up where the code a command runs lies (projectcode.go: the
// nearest package.json or go.mod, a program of node_modules/.bin, a
// package node loads from node_modules, a Python module in the working
// directory).
//
// # Limitations
//
//   - The options and operands of the commands in the semantics table
//     (package cmdsem) are file operations and questions of their own;
//     arguments of other commands are only checked for rules with
//     sandbox_paths, by a heuristic: every non-option argument after the
//     pattern's words is a path. What a program writes by itself is bounded
//     by the OS sandbox, not by this package.
//   - A relative path is judged in every directory the script may be in
//     after its cd, pushd and popd (at most 16; more asks), so a cd that
//     fails at run time cannot move a write to an unjudged place.
//   - Symlinks are resolved when the decision is made. A link swapped between
//     the decision and the run changes nothing for the sandbox (which binds
//     zones, not paths), but can make a decision describe a different file.
//   - Bare deny names (".env") match any path component with that name; the
//     OS sandbox can only mask the ones that exist, or sit at a zone root or
//     the working directory, when the command starts.
//   - Protected names (sandbox.protect and sandbox.DefaultProtect) make a
//     write or delete ask wherever the policy sees one: redirections, the
//     options of well-known commands that write a file, guardrun fs. A
//     program that writes them by itself (git config, an editor) is
//     stopped by the OS sandbox, not here.
//   - A rule that might match because a word is only known at run time makes
//     the part ask; the engine never guesses run-time values.
//   - The prediction resolves program names in the PATH guardrun runs with
//     (SetCommandEnv), and the pager git starts from GIT_PAGER, PAGER or
//     the system's; git's core.pager and other configuration, a textconv
//     or diff driver, hooks and aliases are not read, so what they run is
//     held at run time. What the rows of cmdsem's prediction column do
//     not describe is not bounded.
//   - code_in judges the code a command runs where it lies when the
//     decision is made: a package.json, a node_modules/.bin program or a
//     module created or replaced between the decision and the run is
//     what runs (in the sandbox, and undone by a checkpoint like any
//     other change of the zone). What that code loads from elsewhere (a
//     Makefile's include, node --require, a pytest plugin) is only read.
//   - A config file is refused above 128 KiB (MaxConfigBytes), or when its
//     YAML aliases expand it past 4 MiB; at most 20 errors are reported,
//     each value quoted in one cut at 64 bytes. A file within the limits can
//     still cost tens of megabytes and a fraction of a second to refuse.
package rules
