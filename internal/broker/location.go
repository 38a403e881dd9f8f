package broker

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/guardrun/guardrun/internal/config"
	"github.com/guardrun/guardrun/internal/sys/sockdir"
)

// SocketPath is where the person's broker listens, for the environment
// e: broker/socket beside the session store, which is
// $XDG_RUNTIME_DIR/guardrun when that is a private directory, else the
// state directory ($XDG_STATE_HOME/guardrun, ~/.local/state/guardrun).
// Both are locations config.Load checks against the rw zones, and both
// are hidden inside the sandbox. Where that path would not fit a unix
// socket's address, /tmp/guardrun-broker-UID/socket (a directory Listen
// makes private and refuses when it is another user's; a client refuses
// a server of another user).
func SocketPath(e *config.Env) string {
	if store := e.SessionStore(); store != "" {
		p := filepath.Join(filepath.Dir(store), "broker", "socket")
		if len(p) <= sockdir.MaxPath {
			return p
		}
	}
	return filepath.Join("/tmp", fmt.Sprintf("guardrun-broker-%d", os.Geteuid()), "socket")
}

// Dir is the directory of SocketPath(e), which sandboxes hide.
func Dir(e *config.Env) string { return filepath.Dir(SocketPath(e)) }
