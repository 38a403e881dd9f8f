package request

import (
	"errors"

	"github.com/guardrun/guardrun/internal/config"
)

// ConfigFlags are the options config.Load takes.
func (g Options) ConfigFlags() config.Flags {
	return config.Flags{Config: g.Config, Mode: g.Mode}
}

// ConfigFor loads the config in force in dir, as guardrun would starting
// there: --config or $GUARDRUN_CONFIG, else the nearest .guardrun.yaml
// (trusted, or only tightening the base), the user config, the embedded
// default (whose workspace is dir). A session without an OS sandbox
// settled what happens from its config's require_os_sandbox and
// os_sandbox_fallback; a config in dir that settles it otherwise is an
// error (it needs a fresh session there). `guardrun shell` calls it on
// cd, then sets s.Loaded to the result.
func (s *Session) ConfigFor(dir string) (*config.Loaded, error) {
	e := *s.Env
	e.Cwd = dir
	l, err := config.Load(s.Opts.ConfigFlags(), &e)
	if err != nil {
		return nil, err
	}
	if !s.Sandboxed || s.NoSandbox != nil {
		was, now := s.Loaded.Cfg.Sandbox, l.Cfg.Sandbox
		if was.RequireOSSandbox != now.RequireOSSandbox || was.Fallback != now.Fallback {
			return nil, errors.New("its config treats running without an OS sandbox differently; start guardrun shell there")
		}
	}
	return l, nil
}
