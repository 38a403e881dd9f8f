// Package sandbox derives the platform-neutral sandbox Profile from what
// the config allows (Spec), validates it, and narrows it by an operator's
// profile (Intersect): which trees a sandboxed command may read, which it
// may write, which paths are masked, whether it has a network (or only a
// route to guardrun's proxy: Proxy), and which environment variables it
// never sees.
//
// It does not apply anything. It runs no process and makes no system
// call beyond reading the file system (to resolve symlinks and to find
// denied names); it imports only the standard library and
// internal/sys/regfile (which opens a file only when it is a regular one),
// and never os/exec or syscall (internal/layers enforces this). The bwrap and seatbelt
// packages render a Profile for their platform and must never grant more
// than Access reports. What the bwrap and landlock backends share is
// here too: the environment a command starts with (CommandEnv) and the
// rule that tells the empty directories bwrap mounts its masks on
// (PlaceholderPerm, PlaceholderMode), which landlock takes as the missing
// names they stand for.
//
// The profile is "never weaker" than the config: nothing is writable that
// no read-write zone covers, nothing listed in deny is visible, there is
// no network unless the config or the matched rule allows it, and
// guardrun's own files are never writable. The property tests check these
// over random specs and paths.
//
// # Limitations
//
//   - Derive reads a few small files in writable zones (git pointer files
//     and the config of what is shaped like a git directory), and skips
//     one that is not a regular file without opening it (a FIFO or a
//     link to a device put there).
//   - Paths are resolved when Derive runs. A symlink planted in a writable
//     zone afterwards is followed by the kernel inside the sandbox, where
//     only exposed trees exist, so it cannot lead outside them; but a
//     denied path that is created on the host after Derive, in a tree the
//     walk did not reach, is not masked.
//   - DenyNames are found by a bounded walk (MaxWalkEntries). Beyond the
//     bound, files with a denied name are visible; Derive says so in
//     Profile.Warnings. The names at zone roots and in the working
//     directory are always masked. The walk does not list the 256
//     fan-out directories of a git object store (.git/objects/00 to ff),
//     where git keeps its loose objects under their hashes: a file with a
//     denied name placed there by hand is visible.
//   - ProtectNames are found by the same bounded walk: every existing one
//     inside a writable tree becomes a ReadOnlyOver entry, and a missing
//     one is listed (to be made uncreatable) only at zone roots, the
//     working directory, the roots of repositories found (a directory
//     holding .git) and inside each .git, and only where its parent
//     exists (never .git itself, so git init works). Elsewhere, and for
//     names created after Derive, Profile.ProtectNames is all a renderer
//     has; bwrap cannot use it. Inside node_modules protected names are
//     not looked for at all (see dependencyDir). More than
//     MaxProtectedOver of them in the writable zones is an error (each
//     is a mount on every command), naming the directories that hold
//     the most.
//   - Access works on path strings. Hard links are not paths: a hard link
//     to a denied file placed inside a zone is readable through the zone.
//   - A Profile cannot express "visible but not listable" or limits on
//     size, time or processes; those belong to the renderers or are not
//     enforced.
//   - DefaultSystemPaths exposes all of /etc except DefaultSystemDeny.
//     Files there that the user can read (configuration that embeds
//     passwords, for example) are readable inside.
//   - Spec.Toolchains shows whole layouts (~/.pyenv, ~/.nvm, ...) by
//     their defaults; only the credential files it knows (each layout's
//     deny globs, HomeCredentials) are denied inside them, so a token
//     a tool keeps under another name there is readable. A layout moved
//     by its variable (PYENV_ROOT, NVM_DIR, CARGO_HOME) is not found:
//     the environment can be shaped by what ran before, so only the
//     fixed layouts under the home directory count, and PATH only picks
//     among them. Links are followed only at a layout's own name, once,
//     and only under Spec.AccountHome.
package sandbox
