// Package agents is what guardrun knows about the agent CLIs it wires
// itself into (Claude Code, Codex, Gemini CLI): the JSON their pre-tool
// hooks send and the answers they honour, the tools they offer and what
// each means as a command or a file operation, Codex's patch format, and
// the editors that put guardrun's hook into their settings files while
// keeping every other byte of them.
//
// It decides nothing: internal/cli reads a hook's input with [ParseHook],
// judges the [Call] with the request pipeline and answers with the
// [Answer] this package renders in the agent's own words. It starts no
// process and never reads the person's files by itself; the editors take
// and return bytes.
//
// # Tickets
//
// A [TicketStore] holds one-time approvals that Claude Code's own
// permission dialog gave: the hook writes one, bound to the exact
// request, into guardrun's state directory, and the rewritten command
// consumes it. docs/agents.md says why a model can neither forge nor
// replay one.
//
// # Limitations
//
//   - The hook formats are those of the versions named in
//     scripts/agents-install.sh; a field or tool the parser does not know
//     is refused, never guessed at.
//   - The JSON editor reads JSON with comments (as Gemini CLI's settings
//     allow) but no other extension (trailing commas, single quotes).
//   - The TOML editor appends and removes a marked block; it validates
//     the file with a TOML parser but edits nothing outside the block.
package agents
