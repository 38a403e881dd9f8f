// Package supervisor runs an agent in a pseudo-terminal on the person's
// terminal and puts the approval prompts of every guardrun process the
// agent starts, however deeply nested, on that same terminal, one at a
// time, with the agent's output held back while a prompt is shown.
//
// It does not decide anything: each guardrun process judges its own
// commands against its own config and sandbox, and only what asks reaches
// the supervisor, which shows it and returns the person's answer. It runs
// no command, reads no config and writes no audit; its session memory
// ("approve for session") lives in memory for the supervisor's lifetime
// and is never written to disk. It does not confine the agent itself: the
// agent runs unsandboxed in the pty, and what it runs through guardrun is
// sandboxed by guardrun.
//
// The pieces are injected into one another: [Server] owns the socket
// (GUARDRUN_SOCKET), its queue and session memory and asks an
// approval.Prompter; [Terminal] is the Prompter that draws on the
// person's terminal; [Supervisor.Run] wires both to the agent's pty;
// [Client] is the Prompter a guardrun child uses to ask over the socket.
// The protocol is package ipc's JSON messages, one request per
// connection; see [Protocol].
//
// # Limitations
//
// The socket only admits processes of the same user, and its directory is
// hidden inside command sandboxes; a process of that user outside any
// sandbox (the agent itself) can still talk to it, and could answer no
// prompt but could ask many (they queue; N denies all). A prompt is drawn
// on the alternate screen after resetting what the agent's output left
// (see vtState); an agent that is on the alternate screen itself has its
// screen cleared and is sent SIGWINCH to repaint, which full-screen
// programs do and others do not. The asker's argv in the prompt is read
// from /proc and is only as true as the process let it be.
package supervisor
