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
// # Limitations
//
// Without a supervisor the prompt shares the terminal with the agent that
// ran guardrun: an agent that ignores SIGTTOU can write over it while it
// waits (TTYPrompter). See docs/limitations.md, "What the prompt
// guarantees".
package approval
