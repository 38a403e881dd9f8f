// Package mcpserver is `guardrun mcp`: a Model Context Protocol server,
// on the official Go SDK (github.com/modelcontextprotocol/go-sdk), whose
// tools are fronts of guardrun's request flow. `run` takes a shell
// script through request.Session.Run (decision, approval, OS sandbox,
// audit with "via": "mcp"); read_file, write_file, edit_file,
// list_directory and search_files go through package files, the same
// code as `guardrun fs` (zones, deny, guardrun's own files, approval with
// the diff). A refusal is a tool error whose text is guardrun's one-line
// reason; a command that ran returns its exit status and the tail of its
// output.
//
// Approvals go to the person through MCP elicitation (a form with the
// request as the terminal prompt shows it, and the choices once, session
// and deny with a note) when the client declares it; otherwise to
// whoever request.Session finds (the supervisor on $GUARDRUN_SOCKET),
// and never to a terminal: the terminal of an MCP server over stdio is
// its client's. With nobody to ask, interactive mode acts as strict.
//
// Transports: stdio (ServeStdio), and streamable HTTP (Handler), stateful
// so that a tool call can ask the client, behind a secret token, a Host
// check and an Origin check. Protocol versions are those up to
// 2025-11-25: from 2026-07-28 on a server may no longer send a request to
// the client while it handles a tool call, and the approval would have to
// travel as an input-required result and a second call (docs/mcp.md).
//
// It does not decide, ask on a terminal, sandbox or audit anything
// itself; it offers no resources, prompts, completions or sampling.
//
// # Limitations
//
//   - An elicitation's answer is the client's word: guardrun cannot tell
//     a person's answer from one the client gives by itself (claude -p
//     answers cancel, codex exec decline; both are denials).
//   - Over HTTP, a client that drops a tool call's connection without
//     cancelling it or deleting its session leaves the call to finish
//     (or time out) on its own; the SDK keeps it for the stream to be
//     resumed.
package mcpserver
