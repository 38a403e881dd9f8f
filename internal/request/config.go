package request

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/sys/regfile"
	"github.com/guardrun/guardrun/internal/trust"
	"github.com/guardrun/guardrun/rules"
	"github.com/guardrun/guardrun/sandbox"
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

// ServerEnvVar names the socket of `guardrun serve`, which a guardrun
// started with it set asks to run its command (see internal/serve).
// Commands never get it; sandboxes hide its directory.
const ServerEnvVar = "GUARDRUN_SERVER"

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

// Loaded is the config in force for one run and where it came from.
type Loaded struct {
	Cfg    *rules.Config
	Engine *rules.Engine
	// Source says how the config was found: --config, $GUARDRUN_CONFIG,
	// project, user config or embedded default.
	Source string
	// Project is the nearest .guardrun.yaml found by walking up, if any.
	Project        string
	ProjectTrusted bool
	// Chain are the files that made the config, base first: the trusted
	// one, then each untrusted file that tightens it.
	Chain []ConfigFile
	// Files are every config file read, to be protected in the sandbox.
	Files []string
}

// ConfigFile is one file of the config in force, where it came from and
// why it is or is not trusted (`guardrun check` shows them all).
type ConfigFile struct {
	File    string   `json:"file"`
	Origin  string   `json:"origin"`
	Trusted bool     `json:"trusted"`
	Why     string   `json:"why"`
	Ignored []string `json:"ignored,omitempty"`
	// Hint is what to do to apply an untrusted file in full.
	Hint string
}

const ProjectFile = ".guardrun.yaml"

// FindProjects lists the .guardrun.yaml files from dir up to /, nearest
// first.
func FindProjects(dir string) []string {
	var out []string
	for {
		p := filepath.Join(dir, ProjectFile)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			out = append(out, p)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return out
		}
		dir = parent
	}
}

// resolver is what one load looks at in the file system, each once:
// the paths it resolves (rules.Resolve from /), the project files found
// above a directory and the bytes of each read. So the checks and the
// two discoveries of one load (from the file system alone, and with the
// environment's choices) see the file system as at one moment, and a
// path met again (a zone root checked against the state directory, the
// session store and the user config; the working directory's project
// files) costs no second walk or read. It lives no longer than the load.
type resolver struct {
	resolved map[string]string
	projects map[string][]string
	read     map[string]readFile
}

type readFile struct {
	data []byte
	err  error
}

func newResolver() *resolver {
	return &resolver{resolved: map[string]string{}, projects: map[string][]string{}, read: map[string]readFile{}}
}

func (r *resolver) resolve(p string) string {
	if out, ok := r.resolved[p]; ok {
		return out
	}
	out := rules.Resolve(p, "/")
	r.resolved[p] = out
	return out
}

// findProjects is FindProjects(dir).
func (r *resolver) findProjects(dir string) []string {
	if out, ok := r.projects[dir]; ok {
		return out
	}
	out := FindProjects(dir)
	r.projects[dir] = out
	return out
}

// readFile is rules.ReadFile(path) of a project file: size-checked
// before it is read. Nothing changes the bytes it returns.
func (r *resolver) readFile(path string) ([]byte, error) {
	if f, ok := r.read[path]; ok {
		return f.data, f.err
	}
	data, err := ReadProject(path)
	r.read[path] = readFile{data, err}
	return data, err
}

// ReadRegular reads a config file that must be a regular file: the
// user config or $GUARDRUN_CONFIG (ReadProject for a project file). In a
// directory the sandbox may write, it can have been replaced by a FIFO,
// whose open would wait for a writer forever (and with it guardrun, or a
// request of `guardrun serve`, holding the client's descriptors), or by
// a link to a device, whose open alone can act: regfile.Open refuses
// both without opening them. (--config is read as given: it may be a
// pipe, `--config <(...)`.)
func ReadRegular(path string) ([]byte, error) {
	return readConfig(path, regfile.Open)
}

// ReadProject is ReadRegular of a project file, which must not be a
// symbolic link either: guardrun reads and parses it before it knows
// whether it is trusted, and a link a command left there could send
// guardrun, unsandboxed, to a file the command cannot read (a
// credentials file), whose first bytes would come back quoted in the
// parse error the agent is shown.
func ReadProject(path string) ([]byte, error) {
	return readConfig(path, regfile.OpenNoFollow)
}

func readConfig(path string, open func(string) (*os.File, fs.FileInfo, error)) ([]byte, error) {
	f, _, err := open(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	return rules.ReadOpened(f)
}

// loadRegular is rules.Load of a file read by ReadRegular.
func loadRegular(path string, env rules.Env) (*rules.Config, error) {
	data, err := ReadRegular(path)
	if err != nil {
		return nil, err
	}
	return rules.ParseFile(path, data, env)
}

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

// Load discovers and loads the config: --config, $GUARDRUN_CONFIG, the
// .guardrun.yaml files above the working directory (the nearest trusted
// one, tightened by each untrusted one below it), the user config, then
// the embedded default. What the environment chose ($GUARDRUN_CONFIG,
// XDG_*) is trusted only outside every rw zone of the config found
// without it.
func Load(g Options, e *Env) (*Loaded, error) {
	l := &Loaded{}
	res := newResolver()
	if g.Config != "" {
		cfg, err := rules.Load(g.Config, e.RulesEnv())
		if err != nil {
			return nil, err
		}
		if err := checkState(e, res, cfg); err != nil {
			return nil, err
		}
		l.Cfg, l.Source = cfg, "--config"
		l.Chain = []ConfigFile{{File: cfg.File, Origin: "--config", Trusted: true, Why: "named on guardrun's own command line"}}
	} else {
		// The config found from the file system alone: its rw zones say
		// where nothing of guardrun's may come from. Without XDG_*
		// choices it is the one discovery finds anyway.
		chosen := e.configVar != "" || e.stateVar != "" || e.storeVar != ""
		ref := l
		discovered := false
		if chosen {
			clean := e.Clean()
			ref = &Loaded{}
			same := e.discoversAs(clean)
			var base func() (*rules.Config, []ConfigFile, error)
			if !same {
				// Only ref's rw zones are read: the embedded
				// default, when it is the base, is decoded for
				// them alone.
				base = func() (*rules.Config, []ConfigFile, error) { return userOrDefault(clean, "", true) }
			}
			if err := ref.discover(clean, base, res); err != nil {
				return nil, err
			}
			if err := checkState(e, res, ref.Cfg); err != nil {
				return nil, err
			}
			if same {
				// Only the session store's place was chosen
				// ($XDG_RUNTIME_DIR): discovery reads the same files
				// with the same trust store, so it would find ref
				// again. Its config is checked again below, as the
				// config in force.
				*l, discovered = *ref, true
			}
		}
		var userWhy string
		if e.configVar != "" {
			// As $GUARDRUN_CONFIG: a link on the way in an rw zone
			// could send the path outside every zone.
			if hop, why := linkInRW(res, e.UserConfig(), ref.Cfg); why != "" {
				return nil, fmt.Errorf("the user config %s ($%s) is reached through the link %s, %s: refusing to read it; unset %s or point it outside every rw zone", e.UserConfig(), e.configVar, hop, why, e.configVar)
			}
			userWhy = insideRW(res, e.UserConfig(), ref.Cfg)
		}
		gc := e.Getenv("GUARDRUN_CONFIG")
		discover := func(zonesOnly bool) error {
			*l = Loaded{}
			return l.discover(e, func() (*rules.Config, []ConfigFile, error) {
				return userOrDefault(e, userWhy, zonesOnly)
			}, res)
		}
		if !discovered {
			// With $GUARDRUN_CONFIG, the config discovered here is
			// read for its rw zones (is that file inside one?) and
			// replaced by it when it is not: the embedded default, as
			// its base, is decoded in full only when it stays.
			if err := discover(gc != ""); err != nil {
				return nil, err
			}
		}
		if gc != "" {
			full := func() error { return nil }
			if !discovered {
				full = func() error { return discover(false) }
			}
			if err := l.fromEnv(e, res, gc, ref.Cfg, full); err != nil {
				return nil, err
			}
		}
		if err := checkState(e, res, l.Cfg); err != nil {
			return nil, err
		}
	}
	for _, f := range l.Chain {
		if f.File != rules.DefaultName {
			l.Files = append(l.Files, f.File)
		}
	}
	if g.Mode != "" {
		l.Cfg.Mode = g.Mode
	}
	var err error
	l.Engine, err = rules.New(l.Cfg, e.Home)
	if err != nil {
		return nil, err
	}
	// Commands run with guardrun's PATH and pager variables (the
	// sandbox keeps them), which the prediction resolves programs by.
	l.Engine.SetCommandEnv(e.Getenv)
	return l, nil
}

// fromEnv applies $GUARDRUN_CONFIG: trusted outside every rw zone of ref
// and of the config discovered so far; inside one, an untrusted file that
// only tightens the latter, which full then discovers in full (it may
// have been decoded for its zones only).
func (l *Loaded) fromEnv(e *Env, res *resolver, gc string, ref *rules.Config, full func() error) error {
	abs, err := filepath.Abs(gc)
	if err != nil {
		return err
	}
	// Resolved once, so that the file read is the one checked: a link
	// in an rw zone flipped between the read and the check would
	// otherwise have a file there trusted as if it lay outside. Outside
	// every rw zone, nothing along the resolved path can change.
	// A link on the way that lies in an rw zone is the command's to
	// change: it could point the path at a file outside every zone (a
	// looser config kept for another project, trusted in full) or at
	// one the command cannot read, quoted in the parse error.
	if hop, why := linkInRW(res, abs, ref, l.Cfg); why != "" {
		return fmt.Errorf("$GUARDRUN_CONFIG (%s) is reached through the link %s, %s: refusing to read it; point $GUARDRUN_CONFIG at the file itself", gc, hop, why)
	}
	abs = res.resolve(abs)
	cfg, err := loadRegular(abs, e.RulesEnv())
	if err != nil {
		return err
	}
	why := insideRW(res, abs, ref, l.Cfg)
	if why == "" {
		l.Cfg, l.Source = cfg, "$GUARDRUN_CONFIG"
		l.Chain = []ConfigFile{{File: cfg.File, Origin: "$GUARDRUN_CONFIG", Trusted: true, Why: "outside every rw zone"}}
		return nil
	}
	if err := full(); err != nil {
		return err
	}
	out, ignored := rules.Tighten(l.Cfg, cfg)
	out.File = cfg.File
	l.Chain = append(l.Chain, ConfigFile{File: cfg.File, Origin: "$GUARDRUN_CONFIG", Why: why, Ignored: ignored,
		Hint: "move it outside every rw zone, or name it with --config"})
	l.Cfg, l.Source = out, fmt.Sprintf("$GUARDRUN_CONFIG (untrusted: only tightens %s)", l.Source)
	return nil
}

// Discover finds the config from the file system: the nearest trusted
// .guardrun.yaml above the working directory, else the base (user config
// or embedded default), then each untrusted .guardrun.yaml below that,
// outermost first, tightening it. So an untrusted file tightens the
// config in force for its parent directory, and a trusted ancestor's
// rules stay. base nil means the user config at its default place.
func (l *Loaded) Discover(e *Env, base func() (*rules.Config, []ConfigFile, error)) error {
	return l.discover(e, base, newResolver())
}

// discover is Discover, looking through res.
func (l *Loaded) discover(e *Env, base func() (*rules.Config, []ConfigFile, error), res *resolver) error {
	if base == nil {
		base = func() (*rules.Config, []ConfigFile, error) { return UserOrDefault(e, "") }
	}
	files := res.findProjects(e.Cwd)
	store := trust.Open(e.StateDir)
	datas := make([][]byte, len(files))
	nearestTrusted := -1
	for i, f := range files {
		// Size-checked before it is read, trusted or not.
		data, err := res.readFile(f)
		if err != nil {
			return err
		}
		datas[i] = data
		ok, err := store.Trusted(f, data)
		if err != nil {
			return err
		}
		if i == 0 {
			l.Project, l.ProjectTrusted = f, ok
		}
		if ok {
			nearestTrusted = i
			break
		}
	}
	if nearestTrusted >= 0 {
		f := files[nearestTrusted]
		cfg, err := rules.Parse(f, datas[nearestTrusted], filepath.Dir(f), e.RulesEnv())
		if err != nil {
			return err
		}
		l.Cfg, l.Source = cfg, "project (trusted)"
		l.Chain = []ConfigFile{{File: f, Origin: "project (.guardrun.yaml above the working directory)", Trusted: true,
			Why: "trusted with guardrun trust (its content hash is in the trust store)"}}
		files = files[:nearestTrusted]
	} else {
		cfg, chain, err := base()
		if err != nil {
			return err
		}
		l.Cfg, l.Chain = cfg, chain
		l.Source = chain[len(chain)-1].Origin
	}
	for i := len(files) - 1; i >= 0; i-- {
		f := files[i]
		proj, err := rules.Parse(f, datas[i], filepath.Dir(f), e.RulesEnv())
		if err != nil {
			return err
		}
		out, ignored := rules.Tighten(l.Cfg, proj)
		out.File = f
		l.Chain = append(l.Chain, ConfigFile{File: f, Origin: "project (.guardrun.yaml above the working directory)",
			Why: "not trusted: project files come with the repository; it only tightens " + l.Cfg.File, Ignored: ignored,
			Hint: "review it and run: guardrun trust " + f})
		l.Cfg, l.Source = out, fmt.Sprintf("project (untrusted: only tightens %s)", l.Source)
	}
	return nil
}

// UserOrDefault is the user config, or the embedded default. untrusted,
// when set, says why the user config (chosen by $XDG_CONFIG_HOME) is not
// trusted: it then only tightens the user config at its default place.
func UserOrDefault(e *Env, untrusted string) (*rules.Config, []ConfigFile, error) {
	return userOrDefault(e, untrusted, false)
}

// userOrDefault is UserOrDefault; with zonesOnly the embedded default,
// when it is the one, is decoded for its zones only (rules.DefaultZones).
func userOrDefault(e *Env, untrusted string, zonesOnly bool) (*rules.Config, []ConfigFile, error) {
	if untrusted != "" {
		base, chain, err := userOrDefault(e.Clean(), "", zonesOnly)
		if err != nil {
			return nil, nil, err
		}
		cfg, err := loadUser(e)
		if err != nil || cfg == nil {
			return base, chain, err
		}
		out, ignored := rules.Tighten(base, cfg)
		out.File = cfg.File
		return out, append(chain, ConfigFile{File: cfg.File, Origin: "user config ($" + e.configVar + ")", Why: untrusted, Ignored: ignored,
			Hint: "unset " + e.configVar + " or point it outside every rw zone"}), nil
	}
	cfg, err := loadUser(e)
	if err != nil {
		return nil, nil, err
	}
	if cfg != nil {
		origin := "user config"
		if e.configVar != "" {
			origin += " ($" + e.configVar + ")"
		}
		return cfg, []ConfigFile{{File: cfg.File, Origin: origin, Trusted: true, Why: "the user's own config, outside every rw zone"}}, nil
	}
	load := rules.LoadDefault
	if zonesOnly {
		load = rules.DefaultZones
	}
	def, err := load(e.RulesEnv())
	if err != nil {
		return nil, nil, err
	}
	return def, []ConfigFile{{File: rules.DefaultName, Origin: "embedded default", Trusted: true, Why: "built into guardrun"}}, nil
}

// loadUser loads the user config; nil when there is none.
func loadUser(e *Env) (*rules.Config, error) {
	uc := e.UserConfig()
	if uc == "" {
		return nil, nil
	}
	cfg, err := loadRegular(uc, e.RulesEnv())
	if err == nil {
		return cfg, nil
	}
	// ENOTDIR: a component is a file; either way there is no user
	// config.
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, nil
	}
	return nil, err
}

// WarnIgnored says once per run, for each untrusted file of the config
// in force, why it is not trusted, what it asked for and did not get, and
// how to apply it in full.
func (l *Loaded) WarnIgnored(w interface{ Write([]byte) (int, error) }) {
	for _, f := range l.Chain {
		if f.Trusted {
			continue
		}
		if f.Origin != "project (.guardrun.yaml above the working directory)" {
			fmt.Fprintf(w, "guardrun: %s (from %s) is %s: it is not trusted and may only tighten the config\n", f.File, f.Origin, f.Why)
		}
		if len(f.Ignored) == 0 {
			continue
		}
		fmt.Fprintf(w, "guardrun: %s is not trusted; it may only tighten the config, so these parts were ignored:\n", f.File)
		for _, s := range f.Ignored {
			fmt.Fprintf(w, "guardrun:   - %s\n", s)
		}
		fmt.Fprintf(w, "guardrun: to apply it in full, %s\n", f.Hint)
	}
}

// LoadConfig finds and loads the config in force for this process.
func LoadConfig(g Options) (*Env, *Loaded, error) {
	e, err := NewEnv()
	if err != nil {
		return nil, nil, err
	}
	l, err := Load(g, e)
	if err != nil {
		return nil, nil, err
	}
	return e, l, nil
}

// ConfigFor loads the config in force in dir, as guardrun would starting
// there: --config or $GUARDRUN_CONFIG, else the nearest .guardrun.yaml
// (trusted, or only tightening the base), the user config, the embedded
// default (whose workspace is dir). A session without an OS sandbox
// settled what happens from its config's require_os_sandbox and
// os_sandbox_fallback; a config in dir that settles it otherwise is an
// error (it needs a fresh session there). `guardrun shell` calls it on
// cd, then sets s.Loaded to the result.
func (s *Session) ConfigFor(dir string) (*Loaded, error) {
	e := *s.Env
	e.Cwd = dir
	l, err := Load(s.Opts, &e)
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
