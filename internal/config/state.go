package config

import (
	"fmt"
	"path/filepath"

	"github.com/guardrun/guardrun/rules"
	"github.com/guardrun/guardrun/sandbox"
)

// rwZone returns the rw zone of cfg that holds path (resolved), if any.
func rwZone(res *resolver, cfg *rules.Config, path string) (*rules.Zone, bool) {
	r := res.resolve(path)
	for i := range cfg.Sandbox.Zones {
		z := &cfg.Sandbox.Zones[i]
		if z.Mode == rules.ReadWrite && rules.Within(r, res.resolve(z.Root)) {
			return z, true
		}
	}
	return nil, false
}

// linkInRW names the first link met resolving p that lies in an rw zone
// of cfgs (its directory does), and why; "" when none does. (A path
// whose links loop is refused by the open that follows.)
func linkInRW(res *resolver, p string, cfgs ...*rules.Config) (hop, why string) {
	_, links, _ := sandbox.ResolveLinks(p)
	for _, hop := range links {
		if why := insideRW(res, filepath.Dir(hop), cfgs...); why != "" {
			return hop, why
		}
	}
	return "", ""
}

// insideRW says which rw zone of any of cfgs holds path, or "".
func insideRW(res *resolver, path string, cfgs ...*rules.Config) string {
	for _, c := range cfgs {
		if z, ok := rwZone(res, c, path); ok {
			return fmt.Sprintf("inside the rw zone %q (%s) of %s, where sandboxed commands can write", z.Name, z.Root, c.File)
		}
	}
	return ""
}

// CheckState refuses a state location an environment variable chose
// inside an rw zone: forged session grants or trust entries written there
// by an earlier command would approve.
func CheckState(e *Env, cfgs ...*rules.Config) error {
	return checkState(e, newResolver(), cfgs...)
}

func checkState(e *Env, res *resolver, cfgs ...*rules.Config) error {
	for _, x := range []struct{ v, dir, what string }{
		{e.stateVar, e.StateDir, "trust store and audit log"},
		{e.storeVar, e.StoreDir, "session grants"},
	} {
		if x.v == "" || x.dir == "" {
			continue
		}
		if why := insideRW(res, x.dir, cfgs...); why != "" {
			return fmt.Errorf("$%s puts guardrun's %s in %s, %s: refusing to use them there; unset %s or point it outside every rw zone", x.v, x.what, x.dir, why, x.v)
		}
	}
	return nil
}
