// Package ipc is guardrun's local IPC between its own processes: the
// supervisor's approval socket, the shared network proxy's control
// socket, `guardrun serve`'s socket, and whatever front comes next (an
// approval broker that one person's guardrun processes all ask, an MCP
// or web front).
//
// It gives, once:
//
//   - a private directory for sockets (PrivateDir: 0700, random name,
//     under $XDG_RUNTIME_DIR or the temporary directory as package
//     sockdir chooses, where the socket's path fits a sockaddr_un), a
//     socket in it (Listen, ListenPrivate: 0600);
//   - the peer check: the kernel's record of who connected (SO_PEERCRED
//     on Linux, LOCAL_PEERCRED and LOCAL_PEERPID on macOS; PeerOf),
//     which must be this process's effective user (CheckPeer). A
//     Listener closes other users' connections unanswered; Dial refuses
//     a server of another user;
//   - framing (AppendFrame, WriteFrame, ReadFrame): 4 bytes of magic, a
//     little-endian uint32 length, the payload, with descriptors
//     (SCM_RIGHTS) on a frame's first bytes; a frame longer than the
//     reader's bound is refused unread;
//   - JSON messages on frames (Conn, Server): a hello each way naming
//     the protocol and its version, then requests with their replies,
//     notices and cancels, in both directions, each strictly decoded:
//     unknown fields, another form, trailing data and a frame over the
//     protocol's MaxMessage are errors, and the side that finds one
//     tells the other why (an error notice) and ends the connection;
//     another protocol or version ends it after the hellos with a
//     *VersionError on both sides.
//
// A Server handles each connection in its own goroutine (at most
// MaxConns at once) and each request on a connection in its own, so one
// server can take requests from many processes at once, several at a
// time from each; Call on the other side waits for its reply, and
// withdraws the request (the handler's context ends) when its own
// context ends first. A client does not wait for the server's hello
// before its first request: a round trip costs milliseconds on a busy
// machine, and a refused hello is that request's error.
//
// The wire, each message one frame with magic MessageMagic ("GRJ1"):
//
//	client → {"type":"hello","body":{"protocol":"guardrun-supervisor","version":2}}
//	client → {"type":"ask","id":1,"body":{...}}
//	server ← {"type":"hello","body":{"protocol":"guardrun-supervisor","version":2}}
//	server ← {"reply":1,"body":{...}}          or {"reply":1,"error":"..."}
//	client → {"cancel":1}                      the request is withdrawn
//	either → {"type":"log","body":{...}}       a notice: no reply
//	either → {"type":"error","error":"..."}    then the connection ends
//
// Both ends of a connection are the same guardrun binary (a process and
// the ones it started): a protocol's Version changes with any change to
// its messages, and nothing older is spoken.
//
// `guardrun serve`'s request is one frame of its own magic ("GRS1") and
// binary payload, sent with four descriptors by a C client that runs
// before the Go runtime (see internal/serve); its server reads it with
// ReadFrame and answers with single bytes the C client reads.
package ipc
