//go:build linux && !cgo

package notify

// HelperAvailable: built without cgo, this binary holds no helper for
// verified commands, which are then refused.
const HelperAvailable = false
