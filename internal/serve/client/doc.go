// Package client is the client side of `guardrun serve` (see
// internal/serve for the protocol): C code in an ELF constructor that
// runs before the Go runtime starts, in the guardrun binary only
// (cmd/guardrun imports this package; nothing else should, so that test
// binaries never talk to a server).
//
// It acts only when $GUARDRUN_SERVER is set to an absolute path,
// argv[1] starts with '-' (every run form of guardrun's command line
// does) and its descriptors 0-2 are open. It connects, checks that the
// server is its own user's and confined no more than itself (see
// internal/serve), then sends its argv, environment, umask, stdin,
// stdout, stderr and working directory to the server and, if the server
// takes the request (R), relays SIGINT, SIGTERM, SIGHUP and SIGQUIT to
// it and exits with the status the server sends (X); before R those
// signals act as on guardrun itself. Anything else (no server, a
// refusal, F, an error before R) returns from the constructor with
// everything it opened closed: guardrun then runs as it would without a
// server.
//
// Without cgo (CGO_ENABLED=0) there is no client: guardrun always runs
// its requests itself.
package client
