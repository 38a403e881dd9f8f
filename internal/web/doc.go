// Package web is the web page of the person's approval broker
// (`guardrun web`): the requests waiting for an answer, live over
// server-sent events, each with what the terminal prompt shows (the
// script with its asking commands marked, file diffs, the parts and
// their reasons, the asking process and its directory) and the same
// choices (once, session, always in this project, deny with a note, by
// button or key); the history from the audit log; session grants and
// project rules, each revocable; checkpoints (through the Checkpoints
// interface, which the checkpoint store implements).
//
// It is built on net/http, html/template and embedded static files: no
// build step, nothing fetched from elsewhere. It does not decide or run
// anything: answers go to the broker (package broker), which returns
// them to the asking guardrun.
//
// # Security
//
//   - It listens on a loopback address only, and answers only requests
//     whose Host header names that address and port (a name another
//     site makes resolve to 127.0.0.1 — DNS rebinding — is refused).
//   - The URL guardrun web prints carries a random token; opening it
//     sets an HttpOnly, SameSite=Strict cookie and redirects to the page
//     without the token. The redirect's fragment, which browsers never
//     send to a server, hands the tab a second secret, its key, which
//     the page keeps in sessionStorage (this origin, this port, this
//     tab). Reading anything (the event stream, the panels) takes the
//     cookie and the key: a browser sends 127.0.0.1's cookies to every
//     server on 127.0.0.1, whatever its port, so the cookie alone must
//     open nothing.
//   - Every change is a POST with the key (the CSRF token), from this
//     page's own Origin (and Sec-Fetch-Site same-origin where sent); no
//     GET changes anything.
//   - What the page shows of a request passes through approval.Sanitize
//     and then html/template's escaping; the page's script inserts only
//     HTML rendered here, and the Content-Security-Policy admits no
//     script or style but the page's own files.
//
// # Limitations
//
// A command sandboxed with network: true shares the host's loopback and
// can connect to the port; it gets neither the token nor a key (they are
// never in an environment or a file), so it is refused like any other
// stranger. Under network off there is no route to it, and the network
// proxy refuses loopback addresses.
package web
