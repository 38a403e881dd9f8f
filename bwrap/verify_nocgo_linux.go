//go:build linux && !cgo

package bwrap

// verifyAvailable: built without cgo, this binary holds no helper for
// verified commands, which are then refused.
const verifyAvailable = false
