// Package checkpoint records the state of a writable zone before a
// command runs, and puts it back: guardrun's checkpoints and undo.
//
// A zone's state is its files that are tracked or untracked and not
// ignored, as git reads the zone's .gitignore files (and those of the
// repository above it, up to but not including the home directory):
// regular files with their content and permissions (set-id and sticky
// bits included), and symbolic links with their targets. It is stored
// with the system's git in a git directory of guardrun's own, one per
// zone, inside guardrun's state directory, which no sandbox can see; a
// private index keeps git's stat data, so recording an unchanged zone
// costs about one `git status`. git runs with an environment and a
// configuration of guardrun's own: no system or global config, no
// hooks, no fsmonitor, no filters or end-of-line conversion (its
// info/attributes unsets them for every path), no excludes but the
// zone's .gitignore files, and it is found in fixed system locations,
// never through $PATH. The permissions git's modes do not carry are
// kept in a list of guardrun's own beside each state.
//
// Numbers are shared by every zone of the store: the requests that run
// from the same state of a zone share its checkpoint, and a request
// that may write several zones gets one number for all of them. Each
// zone is recorded under a lock of its own, so concurrent guardrun runs
// in one zone take their checkpoints one after the other, each of a
// whole state.
//
// It does not decide when a checkpoint is needed, and it never runs
// anything a request asked for: internal/request takes checkpoints
// before requests run, and guardrun's checkpoints and undo verbs list
// and restore them.
//
// # Limitations
//
//   - Ignored files are not recorded: an undo neither restores nor
//     removes them. A file a checkpoint recorded is put back even if a
//     later .gitignore ignores it.
//   - Directories are not recorded as such: their permissions are not
//     restored, an empty one is neither kept nor removed, and one an
//     undo empties is removed when the restored state has no file in it.
//   - Sockets, FIFOs and device nodes are not recorded; owners, times,
//     extended attributes, ACLs and hard links are not restored (an
//     undone file is a new file with the old content and permissions).
//   - A git repository inside a zone (a nested clone, a submodule's
//     checkout) makes the zone uncheckpointable: git would record it as
//     a single entry, not its files. Listing it in .gitignore leaves it
//     out; a zone of its own records it separately.
//   - A file larger than checkpoints.max_file_bytes, a zone beyond
//     checkpoints.max_files or checkpoints.max_bytes, a directory git
//     cannot read, a file it cannot open, and a full or damaged store
//     make the zone uncheckpointable; the caller decides what then.
//   - A checkpoint taken while another command writes to the zone holds
//     each file as it was when git read it.
//   - Damage to a stored object is found when a snapshot reads it (the
//     newest commit and its trees), by a scrub that checks a few objects
//     at every snapshot, or by an undo before it changes anything; a
//     store found damaged takes no more checkpoints until it is reset.
//   - An undo interrupted midway leaves some files restored and others
//     not; the checkpoint it took first still holds the state before it.
package checkpoint
