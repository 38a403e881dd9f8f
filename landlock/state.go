package landlock

import "sync/atomic"

var stateDir atomic.Pointer[string]

// SetStateDir names guardrun's state directory (0700, outside every
// zone: the sandbox hides it), where the landlock backend keeps, for
// each protected path a running command watches, the lock its running
// commands hold and the snapshot they restore to, shared by every
// guardrun process of the user that names the same directory
// (share_linux.go). Empty: none; a command that watches a protected
// path is then refused.
func SetStateDir(dir string) { stateDir.Store(&dir) }

// StateDir is the directory SetStateDir set ("" for none).
func StateDir() string {
	if p := stateDir.Load(); p != nil {
		return *p
	}
	return ""
}
