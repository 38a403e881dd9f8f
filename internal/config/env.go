package config

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/rules"
)

// Env is the process's view of the world that config and state depend on.
type Env struct {
	Cwd        string
	Home       string
	StateDir   string
	ConfigHome string
	// StoreDir is the session store's directory.
	StoreDir string
	// The variables, when set, that chose stateDir, configHome and
	// storeDir: the environment can be shaped by what guardrun ran
	// before (a Makefile's export), so these are checked against the
	// rw zones (SPEC §2, "Nothing the sandboxed side can write loosens
	// guardrun").
	stateVar, configVar, storeVar string
	// pwHome is the home directory of the user's account entry, which
	// the environment cannot change; "" when it cannot be read. A $HOME
	// that differs from it chose the user config and the state
	// locations as the XDG_* variables do (`export HOME := ...` in a
	// Makefile run with SHELL=guardrun).
	pwHome string
	Getenv func(string) string
}

func NewEnv() (*Env, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("working directory: %w", err)
	}
	home, _ := os.UserHomeDir()
	e := &Env{Cwd: cwd, Home: home, Getenv: os.Getenv, pwHome: accountHome()}
	homeVar := ""
	if home != "" && (e.pwHome == "" || filepath.Clean(home) != filepath.Clean(e.pwHome)) {
		homeVar = "HOME"
	}
	// A relative XDG_CONFIG_HOME is invalid (XDG Base Directory) and
	// ignored, as XDG_STATE_HOME is, and a relative $HOME names no user
	// config, as it names no state directory: either would name one
	// under whatever directory guardrun runs in, while the rw-zone check
	// resolves it from /.
	if x := os.Getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		e.ConfigHome = x
		e.configVar = "XDG_CONFIG_HOME"
	} else if filepath.IsAbs(home) {
		e.ConfigHome = filepath.Join(home, ".config")
		e.configVar = homeVar
	}
	if e.configVar != "" {
		// Resolved once, so that the user config read is the one
		// checked against the rw zones: a link in one, flipped between
		// the check and the read, would otherwise have a file there
		// trusted as if it lay outside.
		e.ConfigHome = rules.Resolve(e.ConfigHome, "/")
	}
	e.StateDir = approval.DefaultStateDir()
	if filepath.IsAbs(os.Getenv("XDG_STATE_HOME")) {
		e.stateVar = "XDG_STATE_HOME"
	} else if e.StateDir != "" {
		e.stateVar = homeVar
	}
	e.StoreDir = approval.DefaultStoreDir()
	switch {
	case e.StoreDir == "":
	case filepath.Dir(filepath.Dir(e.StoreDir)) == filepath.Clean(os.Getenv("XDG_RUNTIME_DIR")):
		e.storeVar = "XDG_RUNTIME_DIR"
	case e.stateVar != "":
		e.storeVar = e.stateVar
	}
	// Likewise the state and session store directories a variable chose:
	// the trust store and grants read are those checked.
	if e.stateVar != "" && e.StateDir != "" {
		e.StateDir = rules.Resolve(e.StateDir, "/")
	}
	if e.storeVar != "" && e.StoreDir != "" {
		e.StoreDir = rules.Resolve(e.StoreDir, "/")
	}
	return e, nil
}

// For is e for a request from another process in the same user's
// environment (`guardrun serve`'s clients): its working directory and
// variables. The locations (home, state, config, store) stay e's: the
// caller makes sure the variables that choose them are the same.
func (e *Env) For(cwd string, getenv func(string) string) *Env {
	c := *e
	c.Cwd, c.Getenv = cwd, getenv
	return &c
}

// AccountHome is the home directory of the user database's entry for
// the account guardrun runs as, which the environment cannot change; ""
// when unknown.
func (e *Env) AccountHome() string { return e.pwHome }

// accountHome is the home directory of the account guardrun runs as,
// from the user database rather than the environment; "" when unknown.
func accountHome() string {
	u, err := user.Current()
	if err != nil || !filepath.IsAbs(u.HomeDir) {
		return ""
	}
	return filepath.Clean(u.HomeDir)
}

// Clean is e with every location the environment chose replaced by its
// default under the home directory, and $GUARDRUN_CONFIG unset: what
// guardrun finds from the file system alone.
func (e *Env) Clean() *Env {
	c := *e
	c.configVar, c.stateVar, c.storeVar = "", "", ""
	c.ConfigHome, c.StateDir, c.StoreDir = "", "", ""
	if e.pwHome != e.Home {
		// $HOME too is the environment's choice.
		c.Home = e.pwHome
	}
	if filepath.IsAbs(c.Home) {
		c.ConfigHome = filepath.Join(c.Home, ".config")
		c.StateDir = filepath.Join(c.Home, ".local", "state", "guardrun")
		c.StoreDir = filepath.Join(c.StateDir, "sessions")
	}
	c.Getenv = func(k string) string {
		if k == "GUARDRUN_CONFIG" || strings.HasPrefix(k, "XDG_") {
			return ""
		}
		if k == "HOME" {
			return c.Home
		}
		return e.Getenv(k)
	}
	return &c
}

// discoversAs reports whether Discover finds the same config for e as
// for c: the same working directory, home, state directory (trust
// store) and user config, none of them chosen by a variable (which
// would change how the user config is named).
func (e *Env) discoversAs(c *Env) bool {
	return e.configVar == "" && e.stateVar == "" &&
		e.Cwd == c.Cwd && e.Home == c.Home && e.StateDir == c.StateDir && e.ConfigHome == c.ConfigHome
}

func (e *Env) RulesEnv() rules.Env {
	return rules.Env{Cwd: e.Cwd, Home: e.Home, StateDir: e.StateDir}
}

// UserConfig is $XDG_CONFIG_HOME/guardrun/config.yaml.
func (e *Env) UserConfig() string {
	if e.ConfigHome == "" {
		return ""
	}
	return filepath.Join(e.ConfigHome, "guardrun", "config.yaml")
}

// SessionStore is the session store's directory: the one NewEnv found
// (and Load checked), else approval's default.
func (e *Env) SessionStore() string {
	if e.StoreDir != "" {
		return e.StoreDir
	}
	return approval.DefaultStoreDir()
}
