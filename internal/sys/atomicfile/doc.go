// Package atomicfile replaces a file of guardrun's own (a session
// store, project rules, a checkpoint's records, an agent's settings) so
// that a reader sees the old content or the new in full, never a part,
// and a failed write leaves the old file and no temporary file behind.
//
// It is for files in guardrun's directories and in files the person
// asked guardrun to change. A write a command's request makes in the
// workspace goes through fsop.WriteFile instead, which keeps the
// file's owner and mode and refuses paths that change under it.
package atomicfile
