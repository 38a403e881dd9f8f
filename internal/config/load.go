package config

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"

	"github.com/guardrun/guardrun/rules"
)

// Flags are what the caller chose over the config found: --config and
// --mode.
type Flags struct {
	// Config is --config: the config file, always trusted.
	Config string
	// Mode is --mode (interactive, approve-all, strict); "" keeps the
	// config's.
	Mode rules.Mode
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
	Chain []File
	// Files are every config file read, to be protected in the sandbox.
	Files []string
}

// File is one file of the config in force, where it came from and
// why it is or is not trusted (`guardrun check` shows them all).
type File struct {
	File    string   `json:"file"`
	Origin  string   `json:"origin"`
	Trusted bool     `json:"trusted"`
	Why     string   `json:"why"`
	Ignored []string `json:"ignored,omitempty"`
	// Hint is what to do to apply an untrusted file in full.
	Hint string
}

// Load discovers and loads the config: --config, $GUARDRUN_CONFIG, the
// .guardrun.yaml files above the working directory (the nearest trusted
// one, tightened by each untrusted one below it), the user config, then
// the embedded default. What the environment chose ($GUARDRUN_CONFIG,
// XDG_*) is trusted only outside every rw zone of the config found
// without it.
func Load(g Flags, e *Env) (*Loaded, error) {
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
		l.Chain = []File{{File: cfg.File, Origin: "--config", Trusted: true, Why: "named on guardrun's own command line"}}
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
			var base func() (*rules.Config, []File, error)
			if !same {
				// Only ref's rw zones are read: the embedded
				// default, when it is the base, is decoded for
				// them alone.
				base = func() (*rules.Config, []File, error) { return userOrDefault(clean, "", true) }
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
			return l.discover(e, func() (*rules.Config, []File, error) {
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
		l.Chain = []File{{File: cfg.File, Origin: "$GUARDRUN_CONFIG", Trusted: true, Why: "outside every rw zone"}}
		return nil
	}
	if err := full(); err != nil {
		return err
	}
	out, ignored := rules.Tighten(l.Cfg, cfg)
	out.File = cfg.File
	l.Chain = append(l.Chain, File{File: cfg.File, Origin: "$GUARDRUN_CONFIG", Why: why, Ignored: ignored,
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
func (l *Loaded) Discover(e *Env, base func() (*rules.Config, []File, error)) error {
	return l.discover(e, base, newResolver())
}

// discover is Discover, looking through res.
func (l *Loaded) discover(e *Env, base func() (*rules.Config, []File, error), res *resolver) error {
	if base == nil {
		base = func() (*rules.Config, []File, error) { return UserOrDefault(e, "") }
	}
	files := res.findProjects(e.Cwd)
	store := OpenTrustStore(e.StateDir)
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
		l.Chain = []File{{File: f, Origin: "project (.guardrun.yaml above the working directory)", Trusted: true,
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
		l.Chain = append(l.Chain, File{File: f, Origin: "project (.guardrun.yaml above the working directory)",
			Why: "not trusted: project files come with the repository; it only tightens " + l.Cfg.File, Ignored: ignored,
			Hint: "review it and run: guardrun trust " + f})
		l.Cfg, l.Source = out, fmt.Sprintf("project (untrusted: only tightens %s)", l.Source)
	}
	return nil
}

// UserOrDefault is the user config, or the embedded default. untrusted,
// when set, says why the user config (chosen by $XDG_CONFIG_HOME) is not
// trusted: it then only tightens the user config at its default place.
func UserOrDefault(e *Env, untrusted string) (*rules.Config, []File, error) {
	return userOrDefault(e, untrusted, false)
}

// userOrDefault is UserOrDefault; with zonesOnly the embedded default,
// when it is the one, is decoded for its zones only (rules.DefaultZones).
func userOrDefault(e *Env, untrusted string, zonesOnly bool) (*rules.Config, []File, error) {
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
		return out, append(chain, File{File: cfg.File, Origin: "user config ($" + e.configVar + ")", Why: untrusted, Ignored: ignored,
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
		return cfg, []File{{File: cfg.File, Origin: origin, Trusted: true, Why: "the user's own config, outside every rw zone"}}, nil
	}
	load := rules.LoadDefault
	if zonesOnly {
		load = rules.DefaultZones
	}
	def, err := load(e.RulesEnv())
	if err != nil {
		return nil, nil, err
	}
	return def, []File{{File: rules.DefaultName, Origin: "embedded default", Trusted: true, Why: "built into guardrun"}}, nil
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

// LoadProcess finds and loads the config in force for this process, in
// its own environment.
func LoadProcess(g Flags) (*Env, *Loaded, error) {
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
