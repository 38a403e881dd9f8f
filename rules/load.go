package rules

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"
	"mvdan.cc/sh/v3/syntax"

	"github.com/guardrun/guardrun/shellparse"
)

//go:embed default.yaml
var defaultYAML []byte

// parsed remembers, for this process, what is the same every time a
// config is parsed: the embedded default's YAML document, and the words
// of each rule pattern (shellparse.SplitPattern depends on nothing else
// than its arguments). guardrun parses the default twice when the
// environment chose where its files are (once as found from the file
// system alone), and a pattern split is a shell parse. Nothing that
// reads a document changes it; a word list is copied for each rule.
var parsed struct {
	sync.Mutex
	// defaultDoc and zonesDoc are the documents of defaultYAML and
	// zonesYAML.
	defaultDoc, zonesDoc *yaml.Node
	// zones is zonesYAML's text, made on first use.
	zones []byte
	words map[patternKey]patternWords
}

type patternKey struct {
	pat  string
	lang syntax.LangVariant
}

type patternWords struct {
	words []string
	err   error
}

// maxRememberedPatterns bounds parsed.words: past it, patterns are split
// every time. So does maxRememberedPattern, the longest pattern
// remembered: a project file may hold patterns of up to MaxConfigBytes,
// and 4096 of them, each with its words, would be a gigabyte a
// long-lived guardrun keeps. Real patterns are a few words.
const (
	maxRememberedPatterns = 4096
	maxRememberedPattern  = 512
)

// embeddedDocument returns where the document of data is remembered:
// data is the embedded default or its zones, or nil.
func embeddedDocument(data []byte) **yaml.Node {
	same := func(b []byte) bool { return len(data) > 0 && len(data) == len(b) && &data[0] == &b[0] }
	if same(defaultYAML) {
		return &parsed.defaultDoc
	}
	parsed.Lock()
	zones := parsed.zones
	parsed.Unlock()
	if same(zones) {
		return &parsed.zonesDoc
	}
	return nil
}

// zonesYAML is the embedded default with the lines of its shell section
// blank: the rest decodes as in the default, at the same lines.
func zonesYAML() []byte {
	parsed.Lock()
	defer parsed.Unlock()
	if parsed.zones != nil {
		return parsed.zones
	}
	lines := bytes.SplitAfter(slices.Clone(defaultYAML), []byte("\n"))
	inShell := false
	for i, l := range lines {
		if len(l) > 0 && l[0] != ' ' && l[0] != '#' && l[0] != '\n' {
			inShell = bytes.HasPrefix(l, []byte("shell:"))
		}
		if inShell {
			lines[i] = []byte("\n")
		}
	}
	parsed.zones = bytes.Join(lines, nil)
	return parsed.zones
}

// splitPattern is shellparse.SplitPattern, remembered.
func splitPattern(pat string, lang syntax.LangVariant) ([]string, error) {
	k := patternKey{pat, lang}
	parsed.Lock()
	w, ok := parsed.words[k]
	parsed.Unlock()
	if ok {
		// A copy: the remembered words are shared by every later
		// decoding, and a rule's are its own.
		return slices.Clone(w.words), w.err
	}
	words, err := shellparse.SplitPattern(pat, lang)
	parsed.Lock()
	if parsed.words == nil {
		parsed.words = map[patternKey]patternWords{}
	}
	if len(parsed.words) < maxRememberedPatterns && len(pat) <= maxRememberedPattern {
		parsed.words[k] = patternWords{slices.Clip(words), err}
	}
	parsed.Unlock()
	return slices.Clone(words), err
}

// DefaultName is the File of the embedded default config.
const DefaultName = "(embedded default)"

// DefaultYAML returns the embedded default config's text.
func DefaultYAML() []byte { return slices.Clone(defaultYAML) }

// Env is what loading needs from the environment. Relative roots resolve
// against the config file's directory; $PWD in a root is the working
// directory and ~ (or $HOME) the home directory.
type Env struct {
	Cwd  string
	Home string
	// StateDir is the default directory of the audit log.
	StateDir string
}

// Load reads and validates the config file at path.
func Load(path string, env Env) (*Config, error) {
	data, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseFile(path, data, env)
}

// ParseFile validates data, read from the config file at path: Parse
// with the file named, and its relative roots resolved, by its absolute
// path.
func ParseFile(path string, data []byte, env Env) (*Config, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return Parse(abs, data, filepath.Dir(abs), env)
}

// Default returns the embedded default config. Its workspace zone is the
// working directory. It panics where LoadDefault fails.
func Default(env Env) *Config {
	c, err := LoadDefault(env)
	if err != nil {
		panic("rules: " + err.Error())
	}
	return c
}

// LoadDefault is Default with its error: the embedded file is tested, but
// its workspace zone is the working directory, which may be one no zone
// can be (/: the whole machine writable).
func LoadDefault(env Env) (*Config, error) {
	return loadDefault(env, false)
}

func loadDefault(env Env, zonesOnly bool) (*Config, error) {
	data := defaultYAML
	if zonesOnly {
		data = zonesYAML()
	}
	c, err := parse(DefaultName, data, env.Cwd, env)
	if err != nil {
		return nil, fmt.Errorf("embedded default config, whose workspace zone is the working directory %s: %w", env.Cwd, err)
	}
	// The working directory is wherever the agent's last cd left it; at
	// or above the home directory it would make the person's own startup
	// files and settings writable (~/.gitconfig, ~/.config), which
	// programs outside the sandbox obey.
	if filepath.IsAbs(env.Home) && filepath.IsAbs(env.Cwd) && Within(Resolve(env.Home, "/"), Resolve(env.Cwd, "/")) {
		return nil, fmt.Errorf("embedded default config: its workspace zone is the working directory %s, which holds the home directory %s: "+
			"its startup files and settings (~/.gitconfig, ~/.config) would be writable; run guardrun from a project directory, or name a config whose zones say what may be written", env.Cwd, env.Home)
	}
	// Below it, a directory whose name starts with a dot (~/.config,
	// ~/.local, ~/.dotfiles) holds those settings and the programs on
	// PATH (~/.config/git/config, ~/.local/bin): a command there would
	// write what programs outside the sandbox later obey or run.
	if filepath.IsAbs(env.Home) && filepath.IsAbs(env.Cwd) {
		home, cwd := Resolve(env.Home, "/"), Resolve(env.Cwd, "/")
		if rel, err := filepath.Rel(home, cwd); err == nil && Within(cwd, home) {
			if top, _, _ := strings.Cut(rel, string(filepath.Separator)); strings.HasPrefix(top, ".") && top != "." && top != ".." {
				return nil, fmt.Errorf("embedded default config: its workspace zone is the working directory %s, inside %s of the home directory, "+
					"where the person's settings and programs live (~/.config, ~/.local/bin), which programs outside the sandbox obey and run; "+
					"run guardrun from a project directory, or name a config whose zones say what may be written", env.Cwd, filepath.Join(env.Home, top))
			}
		}
	}
	return c, nil
}

// DefaultZones is LoadDefault for a caller that reads nothing but the
// config's zones (where its rw zones are: config.Load's checks of what
// the environment chose): the shell section, whose rules and examples
// are most of the default's text and decoding and cannot fail (the
// embedded text is tested), is left out (its lines blank), so its Shell
// is the one of an empty config. Everything else, and every error
// LoadDefault returns, is the same.
func DefaultZones(env Env) (*Config, error) {
	return loadDefault(env, true)
}

// Parse validates config text. file names it in errors; dir is the base of
// relative roots.
func Parse(file string, data []byte, dir string, env Env) (*Config, error) {
	return parse(file, data, dir, env)
}

func parse(file string, data []byte, dir string, env Env) (*Config, error) {
	if len(data) > MaxConfigBytes {
		return nil, tooLarge(file, int64(len(data)))
	}
	// Decoded before with the same name, bytes, directory and
	// environment: the same config (see decoded).
	k := decodedKey{file: file, dir: dir, env: env, sum: sha256.Sum256(data)}
	if c := recallDecoded(k); c != nil {
		return c, nil
	}
	d := &decoder{file: file, dir: dir, env: env}
	c := d.config(data)
	if len(d.errs) > 0 {
		d.finish()
		return nil, d.errs
	}
	rememberDecoded(k, c)
	return c, nil
}

type decoder struct {
	file string
	dir  string
	env  Env
	errs ConfigErrors
	// dropped counts the errors beyond maxKeptErrors.
	dropped int
	// located counts the items given a position (at), for maxLocated.
	located int
	// zonesNamed are the zone names sandbox.paths defines, valid or
	// not: a rule naming a zone whose definition failed is not a second
	// error.
	zonesNamed map[string]bool
}

func (d *decoder) errAt(n *yaml.Node, path, format string, args ...any) {
	if len(d.errs) >= maxKeptErrors {
		d.dropped++
		return
	}
	e := &ConfigError{File: d.file, Path: path, Msg: fmt.Sprintf(format, clipQuoted(format, args)...)}
	if n != nil {
		e.Line, e.Col = n.Line, n.Column
	}
	d.errs = append(d.errs, e)
}

func (d *decoder) config(data []byte) *Config {
	c := &Config{
		File: d.file,
		Dir:  d.dir,
		Mode: ModeInteractive,
		Shell: Shell{
			Program: "/bin/bash",
			Default: Action{Allowed: true, Approval: true},
		},
		Sandbox: Sandbox{
			SystemRead:       SystemRead{Default: true},
			RequireOSSandbox: true,
			Fallback:         FailFast,
			Backend:          BackendAuto,
		},
		Session:     Session{TTL: 8 * time.Hour},
		Checkpoints: DefaultCheckpoints(),
	}
	if d.env.StateDir != "" {
		c.Audit.Path = filepath.Join(d.env.StateDir, "audit.jsonl")
		c.defaultAudit = c.Audit.Path
	}

	remembered := embeddedDocument(data)
	var doc *yaml.Node
	if remembered != nil {
		parsed.Lock()
		doc = *remembered
		parsed.Unlock()
	}
	if doc == nil {
		before := len(d.errs)
		dec := yaml.NewDecoder(bytes.NewReader(data))
		doc = &yaml.Node{}
		if err := dec.Decode(doc); err != nil {
			if errors.Is(err, io.EOF) {
				return c // an empty file is an empty config: every default
			}
			d.yamlErr(err)
			return c
		}
		var extra yaml.Node
		if err := dec.Decode(&extra); err == nil {
			d.errAt(&extra, "", "a config file holds one YAML document; found another")
		} else if !errors.Is(err, io.EOF) {
			d.yamlErr(err)
		}
		if size := expandedSize(doc, maxExpanded, map[*yaml.Node]int64{}); size > maxExpanded {
			d.errAt(nil, "", "with its aliases (*name) expanded the document is more than %s; a config may expand to at most that: use fewer aliases", sizeText(maxExpanded))
			return c
		}
		if remembered != nil && len(d.errs) == before && d.dropped == 0 {
			parsed.Lock()
			*remembered = doc
			parsed.Unlock()
		}
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		return c
	}
	d.mapping(root, "", map[string]func(*yaml.Node, string){
		"mode": func(n *yaml.Node, p string) {
			if s, ok := d.enum(n, p, "interactive", "approve-all", "strict"); ok {
				c.Mode = Mode(s)
			}
		},
		"shell":   func(n *yaml.Node, p string) { d.shell(n, p, c) },
		"sandbox": func(n *yaml.Node, p string) { d.sandbox(n, p, c) },
		"audit": func(n *yaml.Node, p string) {
			d.mapping(n, p, map[string]func(*yaml.Node, string){
				"path": func(n *yaml.Node, p string) {
					if s, ok := d.path(n, p); ok {
						c.Audit.Path = s
					}
				},
			})
		},
		"checkpoints": func(n *yaml.Node, p string) { d.checkpoints(n, p, &c.Checkpoints) },
		"session": func(n *yaml.Node, p string) {
			d.mapping(n, p, map[string]func(*yaml.Node, string){
				"ttl": func(n *yaml.Node, p string) {
					s, ok := d.str(n, p)
					if !ok {
						return
					}
					ttl, err := time.ParseDuration(s)
					if err != nil || ttl <= 0 {
						d.errAt(n, p, "want a positive duration such as 8h or 30m, got %q", s)
						return
					}
					c.Session.TTL = ttl
				},
			})
		},
	})
	if dm := c.Sandbox.Domains; len(dm.Loopback) > 0 && !c.Sandbox.Proxy {
		e := &ConfigError{File: d.file, Path: "sandbox.domains.loopback",
			Msg: "has no effect unless sandbox.network is proxy: commands reach the host's loopback only through guardrun's proxy"}
		if at, ok := parseAt(dm.LoopbackAt); ok {
			e.Line, e.Col = at[0], at[1]
		}
		d.errs = append(d.errs, e)
	}
	// Rules name zones, which may be written after them: check at the end.
	for i, r := range c.Shell.Rules {
		for key, names := range map[string][]string{"sandbox_paths": r.SandboxPaths, "code_in": r.CodeIn} {
			for j, z := range names {
				if _, ok := c.ZoneByName(z); !ok && !d.zonesNamed[z] {
					d.errs = append(d.errs, &ConfigError{
						File: d.file, Path: fmt.Sprintf("shell.rules[%d].%s[%d]", i, key, j),
						Msg: fmt.Sprintf("no zone named %q in sandbox.paths", z),
					})
					if at, ok := parseAt(r.At); ok {
						last := d.errs[len(d.errs)-1]
						last.Line, last.Col = at[0], at[1]
					}
				}
			}
		}
	}
	slices.SortStableFunc(d.errs, func(a, b *ConfigError) int {
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return a.Col - b.Col
	})
	return c
}

// yamlErr turns a yaml.v3 syntax error ("yaml: line 3: ...") into a
// located ConfigError.
func (d *decoder) yamlErr(err error) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	e := &ConfigError{File: d.file, Msg: msg}
	var line int
	if n, _ := fmt.Sscanf(msg, "line %d:", &line); n == 1 {
		e.Line, e.Col = line, 1
		e.Msg = strings.TrimSpace(msg[strings.Index(msg, ":")+1:])
	}
	d.errs = append(d.errs, e)
}

func parseAt(at string) ([2]int, bool) {
	// at is "file:line:col"; the file may itself hold colons.
	var out [2]int
	i := strings.LastIndexByte(at, ':')
	if i < 0 {
		return out, false
	}
	j := strings.LastIndexByte(at[:i], ':')
	if j < 0 {
		return out, false
	}
	if _, err := fmt.Sscanf(at[j+1:], "%d:%d", &out[0], &out[1]); err != nil {
		return out, false
	}
	return out, true
}

func (d *decoder) at(n *yaml.Node) string {
	if d.located++; d.located > maxLocated {
		if d.located == maxLocated+1 {
			d.errAt(n, "", "more than %d rules, examples, zones and domain entries (aliases expanded); a config may have at most that", maxLocated)
		}
		return ""
	}
	return fmt.Sprintf("%s:%d:%d", d.file, n.Line, n.Column)
}

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "null"
		case "!!bool":
			return "a boolean"
		case "!!int", "!!float":
			return "a number"
		}
		return fmt.Sprintf("the string %q", clip(n.Value, maxQuoted))
	}
	return "something else"
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// mapping walks a mapping node: every key must be known and appear once.
func (d *decoder) mapping(n *yaml.Node, path string, fields map[string]func(*yaml.Node, string)) {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			return // "key:" with nothing under it is an empty section
		}
		d.errAt(n, path, "want a mapping, got %s", kindName(n))
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		kp := join(path, k.Value)
		if seen[k.Value] {
			d.errAt(k, kp, "key given twice")
			continue
		}
		seen[k.Value] = true
		f, ok := fields[k.Value]
		if !ok {
			d.errAt(k, kp, "unknown key (known: %s)", strings.Join(sortedKeys(fields), ", "))
			continue
		}
		f(deref(v), kp)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func (d *decoder) str(n *yaml.Node, path string) (string, bool) {
	n = deref(n)
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		d.errAt(n, path, "want a string, got %s", kindName(n))
		return "", false
	}
	return n.Value, true
}

func (d *decoder) boolean(n *yaml.Node, path string) (bool, bool) {
	n = deref(n)
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		d.errAt(n, path, "want true or false, got %s", kindName(n))
		return false, false
	}
	var b bool
	if err := n.Decode(&b); err != nil {
		d.errAt(n, path, "want true or false, got %q", n.Value)
		return false, false
	}
	return b, true
}

func (d *decoder) enum(n *yaml.Node, path string, values ...string) (string, bool) {
	s, ok := d.str(n, path)
	if !ok {
		return "", false
	}
	if !slices.Contains(values, s) {
		d.errAt(n, path, "want one of %s, got %q", strings.Join(values, ", "), s)
		return "", false
	}
	return s, true
}

// list walks a sequence node, calling f for each item.
func (d *decoder) list(n *yaml.Node, path string, f func(i int, item *yaml.Node, path string)) {
	n = deref(n)
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.errAt(n, path, "want a list, got %s", kindName(n))
		return
	}
	for i, item := range n.Content {
		f(i, deref(item), fmt.Sprintf("%s[%d]", path, i))
	}
}

func (d *decoder) strList(n *yaml.Node, path string) []string {
	out := []string{}
	d.list(n, path, func(_ int, item *yaml.Node, p string) {
		if s, ok := d.str(item, p); ok {
			out = append(out, s)
		}
	})
	return out
}

// path expands and absolutises a path value: ~ and $HOME are the home
// directory, $PWD the working directory, anything else relative is
// relative to the config file's directory.
func (d *decoder) path(n *yaml.Node, p string) (string, bool) {
	s, ok := d.str(n, p)
	if !ok {
		return "", false
	}
	out, err := expandPath(s, d.dir, d.env)
	if err != nil {
		d.errAt(n, p, "%v", err)
		return "", false
	}
	return out, true
}

func expandPath(s, dir string, env Env) (string, error) {
	if s == "" {
		return "", errors.New("empty path")
	}
	if strings.ContainsRune(s, 0) {
		return "", errors.New("path holds a NUL byte")
	}
	switch {
	case s == "~" || strings.HasPrefix(s, "~/"):
		if env.Home == "" {
			return "", errors.New("~ used but the home directory is unknown")
		}
		s = env.Home + s[1:]
	case s == "$HOME" || strings.HasPrefix(s, "$HOME/"):
		if env.Home == "" {
			return "", errors.New("$HOME used but the home directory is unknown")
		}
		s = env.Home + s[len("$HOME"):]
	case s == "$PWD" || strings.HasPrefix(s, "$PWD/"):
		if env.Cwd == "" {
			return "", errors.New("$PWD used but the working directory is unknown")
		}
		s = env.Cwd + s[len("$PWD"):]
	case strings.HasPrefix(s, "~"):
		return "", fmt.Errorf("%q: only ~ and ~/ are expanded (not ~user)", s)
	}
	if strings.Contains(s, "$") {
		return "", fmt.Errorf("%q: only $HOME and $PWD at the start of a path are expanded", s)
	}
	if !filepath.IsAbs(s) {
		s = filepath.Join(dir, s)
	}
	return filepath.Clean(s), nil
}

func (d *decoder) shell(n *yaml.Node, path string, c *Config) {
	d.mapping(n, path, map[string]func(*yaml.Node, string){
		"program": func(n *yaml.Node, p string) {
			s, ok := d.str(n, p)
			if !ok {
				return
			}
			if s == "" || strings.ContainsAny(s, " \t\n") {
				d.errAt(n, p, "want a program path such as /bin/bash, got %q", s)
				return
			}
			if strings.Contains(s, "/") && !filepath.IsAbs(s) {
				d.errAt(n, p, "want an absolute path or a bare program name, got %q", s)
				return
			}
			c.Shell.Program = s
		},
		"default": func(n *yaml.Node, p string) {
			a := c.Shell.Default
			d.action(n, p, &a, nil)
			c.Shell.Default = a
		},
		"rules": func(n *yaml.Node, p string) {
			d.list(n, p, func(_ int, item *yaml.Node, ip string) {
				if r, ok := d.rule(item, ip, c); ok {
					c.Shell.Rules = append(c.Shell.Rules, r)
				}
			})
		},
		"examples": func(n *yaml.Node, p string) {
			ex := func(dst *[]Example) func(*yaml.Node, string) {
				return func(n *yaml.Node, p string) {
					d.list(n, p, func(_ int, item *yaml.Node, ip string) {
						if s, ok := d.str(item, ip); ok {
							*dst = append(*dst, Example{Script: s, At: d.at(item)})
						}
					})
				}
			}
			d.mapping(n, p, map[string]func(*yaml.Node, string){
				"allow": ex(&c.Shell.Examples.Allow),
				"ask":   ex(&c.Shell.Examples.Ask),
				"block": ex(&c.Shell.Examples.Block),
			})
		},
	})
}

// action reads the keys of an action; rules add their own (extra).
func (d *decoder) action(n *yaml.Node, path string, a *Action, extra map[string]func(*yaml.Node, string)) {
	var approvalNode, checkpointNode *yaml.Node
	fields := map[string]func(*yaml.Node, string){
		"allowed": func(n *yaml.Node, p string) {
			if b, ok := d.boolean(n, p); ok {
				a.Allowed = b
			}
		},
		"approval": func(n *yaml.Node, p string) {
			if b, ok := d.boolean(n, p); ok {
				a.Approval = b
				approvalNode = n
			}
		},
		"checkpoint": func(n *yaml.Node, p string) {
			if v, ok := d.enum(n, p, string(CheckpointRequired), "best_effort", string(CheckpointNone)); ok {
				a.Checkpoint = Checkpoint(v)
				if v == "best_effort" {
					a.Checkpoint = CheckpointBestEffort
				}
				checkpointNode = n
			}
		},
	}
	for k, f := range extra {
		fields[k] = f
	}
	d.mapping(n, path, fields)
	if !a.Allowed && approvalNode != nil && !a.Approval {
		d.errAt(approvalNode, join(path, "approval"), "approval: false has no effect when allowed is false (the command is blocked); remove one of them")
	}
	switch {
	case checkpointNode == nil:
	case !a.Allowed && a.Checkpoint != CheckpointBestEffort:
		d.errAt(checkpointNode, join(path, "checkpoint"), "checkpoint: %s has no effect when allowed is false (the command is blocked); remove one of them", a.Checkpoint)
	case a.Checkpoint == CheckpointRequired && a.Approval:
		d.errAt(checkpointNode, join(path, "checkpoint"), "checkpoint: required says the pre-approval relies on undo, but approval: true asks a person; set approval: false, or remove checkpoint")
	}
}

// checkpoints reads the checkpoints section.
func (d *decoder) checkpoints(n *yaml.Node, path string, c *Checkpoints) {
	c.given = true
	d.mapping(n, path, map[string]func(*yaml.Node, string){
		"enabled": func(n *yaml.Node, p string) {
			if b, ok := d.boolean(n, p); ok {
				c.Enabled = b
			}
		},
		"max_files": func(n *yaml.Node, p string) {
			if v, ok := d.count(n, p); ok {
				c.MaxFiles = int(v)
			}
		},
		"keep": func(n *yaml.Node, p string) {
			if v, ok := d.count(n, p); ok {
				c.Keep = int(v)
			}
		},
		"max_bytes": func(n *yaml.Node, p string) {
			if v, ok := d.size(n, p); ok {
				c.MaxBytes = v
			}
		},
		"max_file_bytes": func(n *yaml.Node, p string) {
			if v, ok := d.size(n, p); ok {
				c.MaxFileBytes = v
			}
		},
		"max_store_bytes": func(n *yaml.Node, p string) {
			if v, ok := d.size(n, p); ok {
				c.MaxStoreBytes = v
			}
		},
	})
}

// count reads a positive whole number (at most a billion).
func (d *decoder) count(n *yaml.Node, path string) (int64, bool) {
	n = deref(n)
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		d.errAt(n, path, "want a positive whole number, got %s", kindName(n))
		return 0, false
	}
	v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
	if err != nil || v <= 0 || v > 1e9 {
		d.errAt(n, path, "want a positive whole number up to 1000000000, got %s", n.Value)
		return 0, false
	}
	return v, true
}

// sizeUnits are the suffixes size takes, longest first. K, KB and KiB
// all mean 1024 bytes (and so on up): one meaning per letter, whatever
// the writer's habit.
var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10},
	{"TB", 1 << 40}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10},
	{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10},
	{"B", 1},
}

// size reads a positive number of bytes: a whole number, or one with a
// unit (512KiB, 100 MiB, 2G).
func (d *decoder) size(n *yaml.Node, path string) (int64, bool) {
	n = deref(n)
	bad := func() (int64, bool) {
		d.errAt(n, path, "want a size such as 100MiB, 2GiB or a number of bytes, got %s", kindName(n))
		return 0, false
	}
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!str") {
		return bad()
	}
	text := strings.TrimSpace(n.Value)
	mult := int64(1)
	if n.Tag == "!!str" {
		for _, u := range sizeUnits {
			if num, ok := strings.CutSuffix(text, u.suffix); ok {
				text, mult = strings.TrimSpace(num), u.mult
				break
			}
		}
	}
	v, err := strconv.ParseInt(strings.ReplaceAll(text, "_", ""), 10, 64)
	if err != nil || v <= 0 || v > (1<<62)/mult {
		return bad()
	}
	return v * mult, true
}

func (d *decoder) rule(n *yaml.Node, path string, c *Config) (Rule, bool) {
	r := Rule{Action: Action{Allowed: true, Approval: true}, At: d.at(n)}
	var patternNode, pathsNode, codeNode *yaml.Node
	before := len(d.errs)
	d.action(n, path, &r.Action, map[string]func(*yaml.Node, string){
		"pattern": func(n *yaml.Node, p string) {
			patternNode = n
			if s, ok := d.str(n, p); ok {
				r.Pattern = s
			}
		},
		"description": func(n *yaml.Node, p string) {
			if s, ok := d.str(n, p); ok {
				r.Description = s
			}
		},
		"sandbox_paths": func(n *yaml.Node, p string) {
			pathsNode = n
			r.SandboxPaths = d.strList(n, p)
		},
		"code_in": func(n *yaml.Node, p string) {
			codeNode = n
			r.CodeIn = d.strList(n, p)
		},
		"network": func(n *yaml.Node, p string) {
			if m := deref(n); m.Kind == yaml.ScalarNode && m.Tag == "!!str" && m.Value == "loopback" {
				r.Loopback = true
				return
			}
			if m := deref(n); m.Kind != yaml.ScalarNode || m.Tag != "!!bool" {
				d.errAt(n, p, "want true, false or loopback, got %s", kindName(m))
				return
			}
			if b, ok := d.boolean(n, p); ok {
				r.Network = b
			}
		},
	})
	if deref(n).Kind != yaml.MappingNode {
		return r, false
	}
	if patternNode == nil {
		d.errAt(n, path, "rule has no pattern")
		return r, false
	}
	if strings.TrimSpace(r.Pattern) == "" {
		d.errAt(patternNode, join(path, "pattern"), "empty pattern")
		return r, false
	}
	words, err := splitPattern(r.Pattern, shellparse.DialectFor(c.Shell.Program))
	if err != nil {
		d.errAt(patternNode, join(path, "pattern"), "%v", err)
		return r, false
	}
	r.Words = words
	if pathsNode != nil && len(r.SandboxPaths) == 0 {
		d.errAt(pathsNode, join(path, "sandbox_paths"), "empty list: the rule could never match; remove the key or name a zone")
	}
	if codeNode != nil && deref(codeNode).Kind == yaml.SequenceNode && len(r.CodeIn) == 0 {
		d.errAt(codeNode, join(path, "code_in"), "empty list: the rule could never match; remove the key or name a zone")
	}
	return r, len(d.errs) == before
}

var zoneNameOK = func(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '-' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

func (d *decoder) sandbox(n *yaml.Node, path string, c *Config) {
	s := &c.Sandbox
	d.mapping(n, path, map[string]func(*yaml.Node, string){
		"paths": func(n *yaml.Node, p string) {
			n = deref(n)
			if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
				return
			}
			if n.Kind != yaml.MappingNode {
				d.errAt(n, p, "want a mapping of zone names to zones, got %s", kindName(n))
				return
			}
			seen := map[string]bool{}
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				zp := join(p, k.Value)
				if !zoneNameOK(k.Value) {
					d.errAt(k, zp, "zone names are letters, digits, '-', '_' and '.'")
					continue
				}
				if seen[k.Value] {
					d.errAt(k, zp, "zone %q defined twice", k.Value)
					continue
				}
				seen[k.Value] = true
				if d.zonesNamed == nil {
					d.zonesNamed = map[string]bool{}
				}
				d.zonesNamed[k.Value] = true
				if z, ok := d.zone(k.Value, k, deref(v), zp); ok {
					s.Zones = append(s.Zones, z)
				}
			}
		},
		"system_read": func(n *yaml.Node, p string) {
			if n.Kind == yaml.ScalarNode {
				v, ok := d.enum(n, p, "default", "none")
				if ok {
					s.SystemRead = SystemRead{Default: v == "default"}
				}
				return
			}
			s.SystemRead = SystemRead{Paths: []string{}}
			d.list(n, p, func(_ int, item *yaml.Node, ip string) {
				v, ok := d.path(item, ip)
				if !ok {
					return
				}
				if !filepath.IsAbs(v) || v == "/" {
					d.errAt(item, ip, "want an absolute system directory other than /, got %q", v)
					return
				}
				s.SystemRead.Paths = append(s.SystemRead.Paths, v)
			})
		},
		"deny": func(n *yaml.Node, p string) {
			d.list(n, p, func(_ int, item *yaml.Node, ip string) {
				v, ok := d.str(item, ip)
				if !ok {
					return
				}
				if v != "" && !strings.ContainsRune(v, '/') && v != "~" && !strings.HasPrefix(v, "$") {
					if v == "." || v == ".." {
						d.errAt(item, ip, "%q is not a file name", v)
						return
					}
					s.Deny = append(s.Deny, v) // a bare name, denied wherever it appears
					return
				}
				if abs, ok := d.path(item, ip); ok {
					if abs == "/" {
						d.errAt(item, ip, "denying / would hide everything; list the directories to hide")
						return
					}
					s.Deny = append(s.Deny, abs)
				}
			})
		},
		"protect": func(n *yaml.Node, p string) {
			d.list(n, p, func(_ int, item *yaml.Node, ip string) {
				v, ok := d.str(item, ip)
				if !ok {
					return
				}
				if v != "" && !strings.HasPrefix(v, "/") && !strings.HasPrefix(v, "~") && !strings.HasPrefix(v, "$") {
					// A relative name, matched at any depth.
					if msg := protectNameErr(v); msg != "" {
						d.errAt(item, ip, "%s", msg)
						return
					}
					s.Protect = append(s.Protect, v)
					return
				}
				if abs, ok := d.path(item, ip); ok {
					if abs == "/" {
						d.errAt(item, ip, "protecting / would leave nothing writable; list the paths to protect")
						return
					}
					s.Protect = append(s.Protect, abs)
				}
			})
		},
		"unix_sockets": func(n *yaml.Node, p string) {
			d.list(n, p, func(_ int, item *yaml.Node, ip string) {
				if abs, ok := d.path(item, ip); ok {
					s.UnixSockets = append(s.UnixSockets, abs)
				}
			})
		},
		"network": func(n *yaml.Node, p string) {
			n = deref(n)
			if n.Kind == yaml.ScalarNode && n.Tag == "!!str" && n.Value == "proxy" {
				s.Network, s.Proxy = false, true
				return
			}
			if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
				d.errAt(n, p, "want true, false or proxy, got %s", kindName(n))
				return
			}
			if b, ok := d.boolean(n, p); ok {
				s.Network, s.Proxy = b, false
			}
		},
		"domains": func(n *yaml.Node, p string) { d.domains(n, p, s) },
		"require_os_sandbox": func(n *yaml.Node, p string) {
			if b, ok := d.boolean(n, p); ok {
				s.RequireOSSandbox = b
			}
		},
		"os_sandbox_fallback": func(n *yaml.Node, p string) {
			if v, ok := d.enum(n, p, string(FailFast), string(RefuseTools)); ok {
				s.Fallback = Fallback(v)
			}
		},
		"backend": func(n *yaml.Node, p string) {
			if v, ok := d.enum(n, p, string(BackendAuto), string(BackendBwrap), string(BackendLandlock)); ok {
				s.Backend = Backend(v)
			}
		},
		"landlock_accept": func(n *yaml.Node, p string) {
			s.LandlockAccept = []string{}
			d.list(n, p, func(_ int, item *yaml.Node, ip string) {
				if v, ok := d.enum(item, ip, LandlockAcceptNames...); ok && !slices.Contains(s.LandlockAccept, v) {
					s.LandlockAccept = append(s.LandlockAccept, v)
				}
			})
		},
		"env_deny": func(n *yaml.Node, p string) {
			s.EnvDeny = []string{}
			d.list(n, p, func(_ int, item *yaml.Node, ip string) {
				v, ok := d.str(item, ip)
				if !ok {
					return
				}
				if _, err := filepath.Match(v, ""); err != nil || v == "" {
					d.errAt(item, ip, "want a variable name or glob such as *_TOKEN, got %q", v)
					return
				}
				s.EnvDeny = append(s.EnvDeny, v)
			})
		},
	})
}

func (d *decoder) zone(name string, key, n *yaml.Node, path string) (Zone, bool) {
	z := Zone{Name: name, Mode: ReadOnly, DeleteApproval: true, At: d.at(key)}
	before := len(d.errs)
	var rootNode, modeNode *yaml.Node
	var rwOnly []*yaml.Node
	var rwOnlyKeys []string
	rwKey := func(key string, dst *bool) func(*yaml.Node, string) {
		return func(n *yaml.Node, p string) {
			if b, ok := d.boolean(n, p); ok {
				*dst = b
				rwOnly = append(rwOnly, n)
				rwOnlyKeys = append(rwOnlyKeys, key)
			}
		}
	}
	d.mapping(n, path, map[string]func(*yaml.Node, string){
		"root": func(n *yaml.Node, p string) {
			rootNode = n
			if v, ok := d.path(n, p); ok {
				z.Root = v
			}
		},
		"mode": func(n *yaml.Node, p string) {
			modeNode = n
			if v, ok := d.enum(n, p, "ro", "rw"); ok {
				z.Mode = ZoneMode(v)
			}
		},
		"read_approval": func(n *yaml.Node, p string) {
			if b, ok := d.boolean(n, p); ok {
				z.ReadApproval = b
			}
		},
		"write_approval":  rwKey("write_approval", &z.WriteApproval),
		"delete_approval": rwKey("delete_approval", &z.DeleteApproval),
		"suffixes": func(n *yaml.Node, p string) {
			z.Suffixes = []string{}
			d.list(n, p, func(_ int, item *yaml.Node, ip string) {
				v, ok := d.str(item, ip)
				if !ok {
					return
				}
				if !strings.HasPrefix(v, ".") || len(v) < 2 || strings.ContainsAny(v, "/*?[") {
					d.errAt(item, ip, "want a file suffix such as .txt, got %q", v)
					return
				}
				z.Suffixes = append(z.Suffixes, v)
			})
			if len(z.Suffixes) > 0 {
				rwOnly = append(rwOnly, n)
				rwOnlyKeys = append(rwOnlyKeys, "suffixes")
			}
		},
	})
	if n.Kind != yaml.MappingNode {
		return z, false
	}
	if rootNode == nil {
		d.errAt(key, path, "zone has no root")
	}
	if modeNode == nil {
		d.errAt(key, path, "zone has no mode (ro or rw)")
	}
	if z.Mode == ReadOnly {
		for i, n := range rwOnly {
			d.errAt(n, join(path, rwOnlyKeys[i]), "has no effect on a read-only zone (mode: ro)")
		}
	}
	if z.Mode == ReadWrite && z.Root == "/" {
		d.errAt(rootNode, join(path, "root"), "a read-write zone at / would make the whole machine writable")
	}
	return z, len(d.errs) == before
}

// protectNameErr says what is wrong with a relative protect entry, or "".
// It is a name matched at any depth (".git/hooks"), so it must be clean:
// no "." or ".." components, no empty ones, no NUL.
func protectNameErr(v string) string {
	if strings.ContainsRune(v, 0) {
		return "the name holds a NUL byte"
	}
	for _, c := range strings.Split(v, "/") {
		if c == "" || c == "." || c == ".." {
			return fmt.Sprintf("want a relative name such as .git/hooks (matched at any depth inside rw zones) or an absolute path, got %q", v)
		}
	}
	return ""
}

func (d *decoder) domains(n *yaml.Node, path string, s *Sandbox) {
	entries := func(dst *[]HostPattern) func(*yaml.Node, string) {
		return func(n *yaml.Node, p string) {
			d.list(n, p, func(_ int, item *yaml.Node, ip string) {
				v, ok := d.str(item, ip)
				if !ok {
					return
				}
				hp, err := ParseHostPattern(v)
				if err != nil {
					d.errAt(item, ip, "%v", err)
					return
				}
				hp.At = d.at(item)
				*dst = append(*dst, hp)
			})
		}
	}
	d.mapping(n, path, map[string]func(*yaml.Node, string){
		"allow": entries(&s.Domains.Allow),
		"deny":  entries(&s.Domains.Deny),
		"loopback": func(n *yaml.Node, p string) {
			s.Domains.LoopbackAt = d.at(n)
			seen := map[int]bool{}
			d.list(n, p, func(_ int, item *yaml.Node, ip string) {
				item = deref(item)
				port, err := strconv.Atoi(item.Value)
				switch {
				case item.Kind != yaml.ScalarNode || item.Tag != "!!int" || err != nil && port == 0:
					d.errAt(item, ip, "want a port number (a server on 127.0.0.1 or ::1), got %s", kindName(item))
					return
				case err != nil || port < 1 || port > 65535:
					d.errAt(item, ip, "port %s is not from 1 to 65535", clip(item.Value, maxQuoted))
					return
				}
				if seen[port] {
					d.errAt(item, ip, "port %d listed twice", port)
					return
				}
				seen[port] = true
				s.Domains.Loopback = append(s.Domains.Loopback, port)
			})
		},
	})
}
