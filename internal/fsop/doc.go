// Package fsop performs the file operations of `guardrun fs` — read,
// atomic write, list and remove — on paths that policy has already
// judged, reaching each one without following a symbolic link, so that
// the file touched is the file that was judged.
//
// It does not judge anything: zones, deny lists and approval belong to
// package rules and package approval, and callers pass fsop the resolved
// path (no symlink, no `..`) that policy decided on. fsop's part is to
// make sure nothing changed that path in between: every directory on the
// way is opened with openat2(RESOLVE_NO_SYMLINKS) on Linux, or one
// component at a time with O_NOFOLLOW elsewhere, and the operation is
// then done relative to the opened parent directory (openat, renameat,
// unlinkat). A symbolic link found anywhere on the path is refused with a
// *SymlinkError.
//
// Writes are atomic: the new content goes to a temporary file in the
// same directory, is synced, takes the old file's permissions (and owner,
// where the process may set it), and is renamed over the target; then
// the directory is synced. A reader sees the old content or the new, in
// full, never a mix; a failed write leaves the old file as it was.
//
// # Limitations
//
//   - Replacing a file by rename gives it a new inode: hard links to the
//     old file keep the old content, and extended attributes and ACLs are
//     not carried over.
//   - A write never creates missing parent directories.
//   - The check that a file still holds what a person approved (Expect)
//     runs just before the rename; a writer that changes the file inside
//     that window is not detected, and its change is replaced.
//   - A process killed while writing leaves its temporary file
//     (.NAME.guardrun-XXXXXXXXXXXX, beside the target) behind; the target
//     itself is intact.
//   - On macOS fsync does not force the drive's cache (F_FULLFSYNC).
package fsop
