// Package client is the client side of `guardrun serve` (see
// internal/serve for the protocol): C code in an ELF constructor that
// runs before the Go runtime starts, in the guardrun binary only
// (cmd/guardrun imports this package; nothing else should, so that test
// binaries never talk to a server).
//
// It acts only when $GUARDRUN_SERVER is set to an absolute path and
// argv[1] starts with '-' (every run form of guardrun's command line
// does). It then sends its argv, environment, umask, stdin, stdout,
// stderr and working directory to the server and, if the server takes
// the request (R), relays SIGINT, SIGTERM, SIGHUP and SIGQUIT to it and
// exits with the status the server sends (X). Anything else (no server,
// a refusal, F, an error before R) returns from the constructor with
// everything it opened closed and the signal mask restored: guardrun
// then runs as it would without a server.
//
// Without cgo (CGO_ENABLED=0) there is no client: guardrun always runs
// its requests itself.
package client
