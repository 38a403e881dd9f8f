// Package cloexec marks inherited descriptors close-on-exec before a
// sandboxed command starts (Linux), so that only the descriptors a backend
// hands on on purpose reach it. The bwrap and landlock backends share it.
//
// It does not close anything and does not choose what to pass: callers
// hand descriptors on through exec.Cmd.ExtraFiles.
package cloexec
