package cli

import (
	"errors"
	"fmt"

	"github.com/guardrun/guardrun/shellparse"
)

// configFor loads the config in force in dir, as guardrun would starting
// there: --config or $GUARDRUN_CONFIG, else the nearest .guardrun.yaml
// (trusted, or only tightening the base), the user config, the embedded
// default (whose workspace is dir).
func (sh *shell) configFor(dir string) (*loaded, error) {
	e := *sh.s.e
	e.cwd = dir
	l, err := load(sh.s.g, &e)
	if err != nil {
		return nil, err
	}
	if !sh.s.sandboxed || sh.s.noSandbox != nil {
		// Without an OS sandbox, what happens was settled at start from
		// that config's require_os_sandbox and os_sandbox_fallback; a
		// config that settles it otherwise needs a fresh start there.
		was, now := sh.s.l.cfg.Sandbox, l.cfg.Sandbox
		if was.RequireOSSandbox != now.RequireOSSandbox || was.Fallback != now.Fallback {
			return nil, errors.New("its config treats running without an OS sandbox differently; start guardrun shell there")
		}
	}
	return l, nil
}

// useConfig makes l the config for the lines that follow, saying so when
// it is another file, and what an untrusted one may not do.
func (sh *shell) useConfig(l *loaded) {
	old := sh.s.l
	sh.s.l = l
	sh.lang = shellparse.DialectFor(l.cfg.Shell.Program)
	if old.cfg.File == l.cfg.File && old.project == l.project && old.projectTrusted == l.projectTrusted {
		return
	}
	fmt.Fprintf(sh.io.Stderr, "guardrun: config: %s (%s)\n", l.cfg.File, l.source)
	l.warnIgnored(sh.io.Stderr)
}
