//go:build !linux

package supervisor

// describePeer is empty where no /proc tells a process's argv.
func describePeer(pid int) string { return "" }

// peerArgv is nil where no /proc tells a process's argv.
func peerArgv(pid int) []string { return nil }
