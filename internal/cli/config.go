package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/trust"
	"github.com/guardrun/guardrun/rules"
)

// env is the process's view of the world that config and state depend on.
type env struct {
	cwd        string
	home       string
	stateDir   string
	configHome string
	getenv     func(string) string
}

func newEnv() (*env, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("working directory: %w", err)
	}
	home, _ := os.UserHomeDir()
	cfgHome := os.Getenv("XDG_CONFIG_HOME")
	if cfgHome == "" && home != "" {
		cfgHome = filepath.Join(home, ".config")
	}
	return &env{
		cwd: cwd, home: home, configHome: cfgHome,
		stateDir: approval.DefaultStateDir(), getenv: os.Getenv,
	}, nil
}

func (e *env) rulesEnv() rules.Env {
	return rules.Env{Cwd: e.cwd, Home: e.home, StateDir: e.stateDir}
}

// userConfig is $XDG_CONFIG_HOME/guardrun/config.yaml.
func (e *env) userConfig() string {
	if e.configHome == "" {
		return ""
	}
	return filepath.Join(e.configHome, "guardrun", "config.yaml")
}

// loaded is the config in force for one run and where it came from.
type loaded struct {
	cfg    *rules.Config
	engine *rules.Engine
	// source says how the config was found: --config, $GUARDRUN_CONFIG,
	// project, user config or embedded default.
	source string
	// project is a .guardrun.yaml found by walking up, if any.
	project        string
	projectTrusted bool
	// ignored lists what an untrusted project config asked for and did
	// not get.
	ignored []string
	// files are every config file read, to be protected in the sandbox.
	files []string
}

const projectFile = ".guardrun.yaml"

// findProject walks up from dir to the nearest .guardrun.yaml.
func findProject(dir string) string {
	for {
		p := filepath.Join(dir, projectFile)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// load discovers and loads the config: --config, $GUARDRUN_CONFIG, the
// nearest .guardrun.yaml (trusted, or only tightening the base), the user
// config, then the embedded default.
func load(g *global, e *env) (*loaded, error) {
	l := &loaded{}
	var err error
	switch {
	case g.config != "":
		l.source = "--config"
		l.cfg, err = rules.Load(g.config, e.rulesEnv())
	case e.getenv("GUARDRUN_CONFIG") != "":
		l.source = "$GUARDRUN_CONFIG"
		l.cfg, err = rules.Load(e.getenv("GUARDRUN_CONFIG"), e.rulesEnv())
	default:
		err = l.discover(e)
	}
	if err != nil {
		return nil, err
	}
	if l.cfg.File != rules.DefaultName {
		l.files = append(l.files, l.cfg.File)
	}
	if g.mode != "" {
		l.cfg.Mode = g.mode
	}
	l.engine, err = rules.New(l.cfg, e.home)
	if err != nil {
		return nil, err
	}
	return l, nil
}

func (l *loaded) discover(e *env) error {
	base, baseSource, err := userOrDefault(e)
	if err != nil {
		return err
	}
	l.project = findProject(e.cwd)
	if l.project == "" {
		l.cfg, l.source = base, baseSource
		return nil
	}
	// Size-checked before it is read, trusted or not.
	data, err := rules.ReadFile(l.project)
	if err != nil {
		return err
	}
	trusted, err := trust.Open(e.stateDir).Trusted(l.project, data)
	if err != nil {
		return err
	}
	proj, err := rules.Parse(l.project, data, filepath.Dir(l.project), e.rulesEnv())
	if err != nil {
		return err
	}
	l.projectTrusted = trusted
	if trusted {
		l.cfg, l.source = proj, "project (trusted)"
		return nil
	}
	if base.File != rules.DefaultName {
		l.files = append(l.files, base.File)
	}
	l.cfg, l.ignored = rules.Tighten(base, proj)
	l.cfg.File = l.project
	l.source = fmt.Sprintf("project (untrusted: only tightens %s)", baseSource)
	return nil
}

func userOrDefault(e *env) (*rules.Config, string, error) {
	if uc := e.userConfig(); uc != "" {
		cfg, err := rules.Load(uc, e.rulesEnv())
		if err == nil {
			return cfg, "user config", nil
		}
		// ENOTDIR: a component is a file (inside the sandbox a missing
		// config directory is masked by one); either way there is no
		// user config.
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return nil, "", err
		}
	}
	return rules.Default(e.rulesEnv()), "embedded default", nil
}

// warnIgnored says once per run what an untrusted project config asked
// for and did not get, and how to trust it.
func (l *loaded) warnIgnored(w interface{ Write([]byte) (int, error) }) {
	if len(l.ignored) == 0 {
		return
	}
	fmt.Fprintf(w, "guardrun: %s is not trusted; it may only tighten the config, so these parts were ignored:\n", l.project)
	for _, s := range l.ignored {
		fmt.Fprintf(w, "guardrun:   - %s\n", s)
	}
	fmt.Fprintf(w, "guardrun: to apply it in full, review it and run: guardrun trust %s\n", l.project)
}

// loadConfig finds and loads the config in force for this process.
func loadConfig(g *global) (*env, *loaded, error) {
	e, err := newEnv()
	if err != nil {
		return nil, nil, err
	}
	l, err := load(g, e)
	if err != nil {
		return nil, nil, err
	}
	return e, l, nil
}
