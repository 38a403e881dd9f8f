// Package broker is the person's approval broker: one long-running
// process per user (`guardrun web` runs one) that every guardrun process
// needing a person posts its request to, and that offers each request
// to every front attached to it (the web page, a terminal, an MCP
// client's dialog), takes the first answer, exactly once, and returns
// it with where it was given.
//
// The pieces:
//
//   - [SocketPath] is where the broker listens: broker/socket beside
//     the session store ($XDG_RUNTIME_DIR/guardrun, else the state
//     directory), a well-known place so that no environment variable
//     has to carry it (commands never get it; sandboxes hide it).
//   - [Listen] and [Server] serve the socket on package ipc's messages
//     (protocol [Protocol]); [Broker] is the state behind it, which
//     in-process fronts use directly ([Broker.Subscribe],
//     [Broker.Answer]).
//   - [Client] is the approval.Prompter of a process that
//     asks: internal/request puts it in the prompter chain after the
//     supervisor's socket; other fronts (an MCP server) use it as is.
//   - [Front] is an out-of-process front: it attaches with the broker's
//     front token, receives pending and resolved notices and answers.
//
// It decides nothing and keeps nothing: each asking process judges its
// own request, keeps its own session grants and project rules, and
// writes its own audit record, with the answer's front.
//
// # Fail closed
//
// A request is answered once: the first answer wins and any later one
// is refused. A front that goes away loses nothing (the request waits
// for the others). An asker that goes away withdraws its request from
// every front. A broker that goes away while requests wait fails each
// of them: the asking process refuses (77) saying so, never runs it.
//
// # Limitations
//
// Any process of the user may ask (the peer check admits only this
// user, and a sandboxed command can reach neither the socket nor its
// directory), so an agent running outside a sandbox can put requests of
// its own making in front of the person: a request carries no authority
// (approving it approves only what its asker then does itself), but its
// presentation is only as true as that asker. Answering needs the front
// token, which only the person is shown.
package broker
