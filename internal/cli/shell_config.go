package cli

import (
	"fmt"

	"github.com/guardrun/guardrun/internal/config"
	"github.com/guardrun/guardrun/shellparse"
)

// configFor loads the config in force in dir, as guardrun would starting
// there: --config or $GUARDRUN_CONFIG, else the nearest .guardrun.yaml
// (trusted, or only tightening the base), the user config, the embedded
// default (whose workspace is dir).
func (sh *shell) configFor(dir string) (*config.Loaded, error) {
	return sh.s.ConfigFor(dir)
}

// useConfig makes l the config for the lines that follow, saying so when
// it is another file, and what an untrusted one may not do.
func (sh *shell) useConfig(l *config.Loaded) {
	old := sh.s.Loaded
	sh.s.Loaded = l
	sh.lang = shellparse.DialectFor(l.Cfg.Shell.Program)
	if old.Cfg.File == l.Cfg.File && old.Project == l.Project && old.ProjectTrusted == l.ProjectTrusted {
		return
	}
	fmt.Fprintf(sh.io.Stderr, "guardrun: config: %s (%s)\n", l.Cfg.File, l.Source)
	l.WarnIgnored(sh.io.Stderr)
}
