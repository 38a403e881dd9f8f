// Package seatbelt renders a [sandbox.Profile] as a macOS Seatbelt (SBPL)
// profile and runs commands under it with /usr/bin/sandbox-exec.
//
// It does not decide policy: what is readable, writable or denied comes
// from the Profile, and Render never grants more than the Profile says
// beyond a fixed minimum every macOS process needs (dyld's shared cache and
// system frameworks, libc's time zone and locale data, /dev/null and the
// terminal, a short list of sysctls and launchd services). Render does not
// touch the file system and can be tested anywhere; only the _darwin.go
// files run anything, and off macOS Command and Check return an error.
//
// Paths never appear in the profile text. Each one is a parameter passed
// as -D NAME=VALUE and read with (param "NAME"), so no path can end a
// string or add a rule. Fixed system strings go through one quoting
// function that refuses control characters.
//
// The profile denies by default, then allows, then denies again: Seatbelt
// lets the last matching rule win, so denied paths, read-only paths inside
// writable trees, and the ancestors of both (which must not be renamed or
// created, or a protected file could be moved away or planted) come last.
//
// Because the kernel reports resolved paths, /tmp, /var and /etc are
// rewritten to /private/tmp, /private/var and /private/etc, and
// /System/Volumes/Data/<dir> to /<dir> for the data volume's firmlinked
// directories (see [Canonical]). Denials are emitted for both the written
// and the canonical spelling; allows only for the canonical one.
//
// # Limitations
//
//   - Seatbelt compares path strings, not files. Symlinks other than the
//     fixed /private aliases must be resolved by the caller before
//     rendering; a file reachable under two names (a hard link made before
//     the run, a second mount) is only as protected as the name the rules
//     use. APFS is usually case- and normalization-insensitive while the
//     rules are byte-exact; whether the kernel always reports the stored
//     spelling has to be verified on a Mac (docs/macos.md).
//   - Nothing is hidden the way a mount namespace hides it: a denied path
//     still exists, and its parents' metadata can be read where they are
//     ancestors of a granted tree. "Private tmp" means only that the run
//     gets its own writable directory as TMPDIR; the host's /tmp stays
//     unreachable rather than empty, and the per-run directory's parents
//     cannot be stat()ed.
//   - There is no system call filter and no pid namespace. Processes of
//     the same sandbox can signal and inspect each other; the launchd
//     services listed in render.go remain reachable and are trusted not to
//     act as confused deputies.
//   - Network access is all or nothing for IP. Unix-domain sockets may be
//     bound inside writable trees and the private tmp, and connected to
//     only where Profile.UnixSockets lists them, with or without network
//     access; unlike Linux, creating one is not refused.
//   - Protected names (Profile.ProtectNames) are denied file-write* by
//     regular expressions at any depth, existing or not, and the first
//     component of a multi-component name (.git) may not be unlinked or
//     renamed; as everywhere here, by path string, not by file.
//   - Descriptors inherited from the parent are not checked by path: the
//     caller must not leak any beyond stdio.
//   - sandbox-exec is deprecated by Apple but still shipped. Unknown
//     operation or filter names make it refuse the whole profile, which
//     fails closed; [Check] renders a profile with every kind of rule to
//     surface that at startup.
//   - None of this has been run on a Mac by the tests that run on Linux;
//     docs/macos.md lists what is verified where.
package seatbelt
