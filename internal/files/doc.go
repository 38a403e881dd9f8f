// Package files carries out guardrun's own file operations — read, write,
// edit, list, remove, and a walk of a tree for a search — for every front
// that offers them: `guardrun fs` and the file tools of `guardrun mcp`.
// Each operation is judged by the file zones (request.Session.DecideFile:
// deny, zones, read-only zones, suffixes, protected names, guardrun's own
// files), put to the gate with what the person needs to see (the diff of
// a change, a new file's content, what is read or removed), done by
// package fsop on the path as resolved when it was judged, and written
// to the audit log with the front that asked (Files.Via).
//
// It does not parse flags, print results or pick who answers a prompt:
// the front does (the session's Prompter, or the supervisor and terminal
// request.Session finds), and shapes the Result as its users read it.
//
// # Limitations
//
//   - A walk (Files.Walk) judges each entry as it reaches it; one that
//     the person would have to approve on its own (a nested zone that
//     asks) is skipped and counted, never asked about one by one.
//   - Content a walk reads is judged as of the moment its entry is
//     reached; a file that appears later is not seen.
package files
