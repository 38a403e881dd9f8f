//go:build linux && !cgo

package landlock

// nestAvailable: built without cgo, this binary holds no trampoline, so
// the command shares the starting thread's domain (see doc.go).
const nestAvailable = false
