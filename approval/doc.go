// Package approval resolves what policy says asks: it applies the verdict ×
// mode table, prompts a person, remembers "approve for session" grants, and
// writes the audit log.
//
// It does not decide verdicts (package rules does) and does not run
// commands. Prompts show requests through Sanitize, so control characters
// and invisible Unicode cannot disguise what a person approves; session
// grants store a hash of the request's parts, its working directory and
// its here-document bodies, never file contents.
//
// The audit log gets two records for a command that runs: one as it
// starts (outcome "started") and one as it ends, sharing Run; JoinRuns
// folds them for display.
//
// # Limitations
//
//   - The new-file view's syntax colouring (highlight.go) is a small
//     built-in one, not a lexer: comments, strings, numbers, keywords,
//     types and function names of 17 languages, by file name or #! line.
//     A library's lexer tables were built at every process start.
//   - A guardrun killed while its command runs leaves only the started
//     record: the command's status and duration are not known.
//   - Without a supervisor the prompt shares the terminal with the agent
//     that ran guardrun: an agent that ignores SIGTTOU can write over it
//     while it waits (TTYPrompter). See docs/limitations.md, "What the
//     prompt guarantees".
package approval
