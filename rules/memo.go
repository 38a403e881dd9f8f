package rules

import (
	"crypto/sha256"
	"reflect"
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
	m map[decodedKey]decodedConfig
	// bytes is the sum of the entries' sizes (configBytes).
	bytes int64
}

type decodedConfig struct {
	c     *Config
	bytes int64
}

type decodedKey struct {
	file, dir string
	env       Env
	sum       [sha256.Size]byte
}

// maxDecoded and maxDecodedBytes bound decoded: past either, entries
// are dropped for a new one. The size of a config is not bounded by its
// file's: within the limits on a file (MaxConfigBytes, maxExpanded), a
// project file of aliases (*name) in a deep directory decodes to
// hundreds of megabytes, every item carrying its file's name (At). Such
// a config, larger than maxDecodedBytes itself, is decoded each time,
// so what a workspace's files make a long-lived guardrun keep is
// bounded by maxDecodedBytes.
const (
	maxDecoded      = 32
	maxDecodedBytes = 8 << 20
)

// recallDecoded returns a copy of the config remembered for key, or nil.
func recallDecoded(k decodedKey) *Config {
	decoded.Lock()
	e := decoded.m[k]
	decoded.Unlock()
	if e.c == nil {
		return nil
	}
	return e.c.clone()
}

// rememberDecoded keeps a copy of c for key, unless c alone is larger
// than maxDecodedBytes.
func rememberDecoded(k decodedKey, c *Config) {
	n := configBytes(c)
	if n > maxDecodedBytes {
		return
	}
	c = c.clone()
	decoded.Lock()
	defer decoded.Unlock()
	if decoded.m == nil {
		decoded.m = map[decodedKey]decodedConfig{}
	}
	if old, ok := decoded.m[k]; ok {
		delete(decoded.m, k)
		decoded.bytes -= old.bytes
	}
	for old, e := range decoded.m {
		if len(decoded.m) < maxDecoded && decoded.bytes+n <= maxDecodedBytes {
			break
		}
		delete(decoded.m, old)
		decoded.bytes -= e.bytes
	}
	decoded.m[k] = decodedConfig{c, n}
	decoded.bytes += n
}

// configBytes is about how much memory c holds: its struct, and every
// string and list under it, each counted where it is met (a string
// shared by several items is counted for each, so it is never less).
func configBytes(c *Config) int64 {
	v := reflect.ValueOf(c).Elem()
	return int64(v.Type().Size()) + heldBytes(v)
}

// heldBytes is what v holds beyond its own size: the bytes of its
// strings and of its slices' arrays (to their capacity), recursively.
func heldBytes(v reflect.Value) int64 {
	switch v.Kind() {
	case reflect.String:
		return int64(v.Len())
	case reflect.Slice:
		n := int64(v.Cap()) * int64(v.Type().Elem().Size())
		for i := range v.Len() {
			n += heldBytes(v.Index(i))
		}
		return n
	case reflect.Struct:
		var n int64
		for i := range v.NumField() {
			n += heldBytes(v.Field(i))
		}
		return n
	}
	return 0
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
	s.Domains.Loopback = slices.Clone(c.Sandbox.Domains.Loopback)
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
		out[i].CodeIn = slices.Clone(out[i].CodeIn)
		out[i].Words = slices.Clone(out[i].Words)
	}
	return out
}
