package rules

import (
	"crypto/sha256"
	"slices"
	"sync"
)

// decoded remembers, for this process, the configs parse made, by
// everything parse reads: the file's name, its bytes (their SHA-256),
// the directory of its relative roots and the environment. parse
// depends on nothing else (it looks at no file: where roots lead is
// resolved by its callers, each time), so the same key always decodes
// to the same config, and a long-lived guardrun (`guardrun serve`,
// `guardrun shell`) that finds the same files again skips decoding them.
// Which files are found, read and trusted is not remembered: every load
// looks again.
var decoded struct {
	sync.Mutex
	m map[decodedKey]*Config
}

type decodedKey struct {
	file, dir string
	env       Env
	sum       [sha256.Size]byte
}

// maxDecoded bounds decoded: past it, an entry is dropped for each new
// one.
const maxDecoded = 32

// recallDecoded returns a copy of the config remembered for key, or nil.
func recallDecoded(k decodedKey) *Config {
	decoded.Lock()
	c := decoded.m[k]
	decoded.Unlock()
	if c == nil {
		return nil
	}
	return c.clone()
}

// rememberDecoded keeps a copy of c for key.
func rememberDecoded(k decodedKey, c *Config) {
	c = c.clone()
	decoded.Lock()
	defer decoded.Unlock()
	if decoded.m == nil {
		decoded.m = map[decodedKey]*Config{}
	}
	if _, ok := decoded.m[k]; !ok && len(decoded.m) >= maxDecoded {
		for old := range decoded.m {
			delete(decoded.m, old)
			break
		}
	}
	decoded.m[k] = c
}

// clone is a copy of c that shares no slice with it: callers change
// the config they get (Mode after --mode, Tighten's results), and a
// remembered config is handed to every later load.
func (c *Config) clone() *Config {
	out := *c
	out.Shell.Rules = cloneRules(c.Shell.Rules)
	out.Shell.Tightening = cloneRules(c.Shell.Tightening)
	out.Shell.Examples = Examples{
		Allow: slices.Clone(c.Shell.Examples.Allow),
		Ask:   slices.Clone(c.Shell.Examples.Ask),
		Block: slices.Clone(c.Shell.Examples.Block),
	}
	s := &out.Sandbox
	s.Zones = slices.Clone(c.Sandbox.Zones)
	for i := range s.Zones {
		s.Zones[i].Suffixes = slices.Clone(s.Zones[i].Suffixes)
	}
	s.SystemRead.Paths = slices.Clone(c.Sandbox.SystemRead.Paths)
	s.Deny = slices.Clone(c.Sandbox.Deny)
	s.Domains.Allow = slices.Clone(c.Sandbox.Domains.Allow)
	s.Domains.Deny = slices.Clone(c.Sandbox.Domains.Deny)
	s.LandlockAccept = slices.Clone(c.Sandbox.LandlockAccept)
	s.EnvDeny = slices.Clone(c.Sandbox.EnvDeny)
	s.Protect = slices.Clone(c.Sandbox.Protect)
	s.UnixSockets = slices.Clone(c.Sandbox.UnixSockets)
	return &out
}

func cloneRules(rs []Rule) []Rule {
	out := slices.Clone(rs)
	for i := range out {
		out[i].SandboxPaths = slices.Clone(out[i].SandboxPaths)
		out[i].Words = slices.Clone(out[i].Words)
	}
	return out
}
