// Package config finds the config in force for a request and decides how
// far each of its files is trusted: --config, $GUARDRUN_CONFIG, the
// .guardrun.yaml files above the working directory (the nearest trusted
// one the base, each untrusted one below it only tightening it), the
// user config, the embedded default (Load, Discover). It also keeps the
// trust store (TrustStore: the project files the person trusted with
// `guardrun trust`, by content hash) and refuses state locations an
// environment variable put inside an rw zone (CheckState), where an
// earlier sandboxed command could have written forged grants or trust
// entries.
//
// Env is the process's view of the world all of that depends on: the
// working directory, home, state, config and session store directories,
// and which of them a variable chose. What the environment chose
// ($GUARDRUN_CONFIG, XDG_*, a $HOME that is not the account's) is
// trusted only outside every rw zone of the config found from the file
// system alone (Env.Clean).
//
// Every config file is read size-checked, as a regular file opened
// without waiting (ReadRegular), a project file also without following
// a link (ReadProject): guardrun reads it before it knows whether it is
// trusted.
//
// internal/request opens its sessions with Load; `guardrun trust`,
// `check`, `explain`, `profile` and `log` use the package directly.
package config
