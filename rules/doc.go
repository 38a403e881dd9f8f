// Package rules is guardrun's policy: the config schema and its strict
// loader, rule matching, file zones, and the verdict (allow, ask or block)
// for a script, an argv or a file operation; and sandbox.domains, the
// verdict for a host the network proxy is asked to reach (HostVerdict).
//
// It decides and never acts: it does not prompt, run, or sandbox anything,
// and imports no process or pty packages (deps_test.go keeps it so). The
// only file system access is reading the config and resolving symlinks in
// paths, so that a zone is chosen for the path the kernel would reach.
//
// # Limitations
//
//   - Path arguments of commands are only checked for rules with
//     sandbox_paths, by a heuristic: every non-option argument after the
//     pattern's words is a path. Redirections are the only file operations
//     judged for every command; what a program writes by itself is bounded
//     by the OS sandbox, not by this package.
//   - Symlinks are resolved when the decision is made. A link swapped between
//     the decision and the run changes nothing for the sandbox (which binds
//     zones, not paths), but can make a decision describe a different file.
//   - Bare deny names (".env") match any path component with that name; the
//     OS sandbox can only mask the ones that exist, or sit at a zone root or
//     the working directory, when the command starts.
//   - A rule that might match because a word is only known at run time makes
//     the part ask; the engine never guesses run-time values.
package rules
