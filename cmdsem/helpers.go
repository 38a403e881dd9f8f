package cmdsem

import (
	"path"
	"slices"
	"strings"
)

// Predict says what a command does by itself, beyond the effects of its
// options and operands (Analyze): the programs it starts of its own
// accord (its helpers: git's pager, tar -z's gzip), the files it writes
// that no argument names (git status's index.lock, sed -i's temporary
// file), and how it acts on the files its arguments name (mkdir -p
// creates each directory on the way, rm -r removes a tree). It is the
// prediction column of the table: runRows, one row per command or
// subcommand, read after the options are.
//
// A command the rows do not describe, or one that runs code the table
// cannot see (make's recipes, a script an interpreter runs, a program an
// option names), is not Bounded: what it runs and writes cannot be told
// from its argv.
func Predict(argv []Arg, env []string) Prediction {
	if len(argv) == 0 || !argv[0].Static {
		return Prediction{Unbounded: "the command name is not known until run time"}
	}
	name := path.Base(argv[0].Value)
	p := Prediction{Command: name}
	s := lookup(name)
	if s == nil {
		s = predictOnly(name)
	}
	if s == nil {
		p.Unbounded = "guardrun does not know the options of " + name
		return p
	}
	r := &result{name: name, argv: argv}
	for _, v := range env {
		if why := s.envWhy(v); why != "" {
			p.Unbounded = v + " is set for it, which " + strings.TrimSuffix(why, ".")
			return p
		}
	}
	s.run(r, 1)
	p.Command, p.Dir = r.name, r.dir
	row, ok := runRows[r.name]
	if ok && row.unbounded != "" {
		p.Unbounded = row.unbounded
		return p
	}
	for _, e := range r.out {
		switch e.Kind {
		case Exec:
			p.Unbounded = r.name + " " + strings.TrimSpace(e.Option+" "+e.Why)
			return p
		case Unknown:
			p.Unbounded = e.Why
			if e.Option != "" && !strings.Contains(e.Why, e.Option) {
				p.Unbounded = e.Option + ": " + e.Why
			}
			return p
		}
	}
	if !ok {
		p.Unbounded = "guardrun does not say what " + r.name + " runs and writes by itself"
		return p
	}
	for _, rule := range row.whenUnbounded {
		if rule.holds(r) {
			p.Unbounded = rule.why
			return p
		}
	}
	for _, e := range r.out {
		if r.dir != "" && e.Path != "" && e.Dir == "" {
			e.Dir = r.dir
		}
		switch e.Kind {
		case Write, Delete:
			p.Files = append(p.Files, row.file(r, e))
			for _, o := range row.own {
				if o.beside != "" && o.beside == optionOf(e) && o.holds(r) {
					if f, ok := o.besideFile(r, e); ok {
						p.Files = append(p.Files, f)
					}
				}
			}
		}
	}
	for _, o := range row.own {
		if o.beside == "" && o.holds(r) {
			p.Files = append(p.Files, File{Base: o.base, Path: o.path, Dir: r.dir, Glob: o.glob, Tree: o.tree, Ops: o.ops, Why: o.why, Word: -1})
		}
	}
	for _, h := range row.helpers {
		if h.holds(r) {
			p.Helpers = append(p.Helpers, h.Helper)
		}
	}
	p.Bounded = true
	return p
}

// Prediction is what Predict found.
type Prediction struct {
	// Command is the command and subcommand as the table read them
	// ("git status").
	Command string
	// Bounded is set when the rows describe everything the command runs
	// and writes; Unbounded says why not.
	Bounded   bool
	Unbounded string
	// Helpers are the programs it may start by itself.
	Helpers []Helper
	// Files are the files it may write: those its arguments name, and
	// its own.
	Files []File
	// Dir is the directory the command moves to first (git -C, tar -C),
	// relative to its working directory; "" when it stays.
	Dir string
}

// Helper is a program a command may start by itself.
type Helper struct {
	// Program is a name looked up in PATH, an absolute path, or (Where
	// GitExecPath) a name or pattern in git's own program directory.
	Program string
	Where   Where
	// Args are the helper's arguments, exactly, unless AnyArgs.
	Args    []string
	AnyArgs bool
	// Pager: the program is the pager the environment names
	// (GIT_PAGER, PAGER; else the system's), started when the output is
	// a terminal. Program is empty.
	Pager bool
	Why   string
}

// Where is where a helper's program is found.
type Where string

const (
	// InPath: looked up in PATH, like the command.
	InPath Where = ""
	// GitExecPath: git's own program directory (git --exec-path), which
	// git puts first in the PATH of what it starts.
	GitExecPath Where = "git-exec-path"
)

// Op is how a command acts on a file.
type Op string

const (
	// OpWrite: opens it for writing, creates it, or puts a name there
	// (rename, link, symlink).
	OpWrite Op = "write"
	// OpMkdir: creates a directory.
	OpMkdir Op = "mkdir"
	// OpDelete: removes it, or renames it away.
	OpDelete Op = "delete"
	// OpMetadata: changes its mode, owner, times or extended attributes.
	OpMetadata Op = "metadata"
)

// Base is what a File's relative Path is relative to.
type Base string

const (
	// BaseWorkDir: the command's working directory (and Dir).
	BaseWorkDir Base = ""
	// BaseGitDir: the git directory of the repository the working
	// directory is in (.git, or where a .git file points).
	BaseGitDir Base = "gitdir"
	// BaseHome: the home directory.
	BaseHome Base = "home"
)

// File is a file, a tree or a pattern a command may write.
type File struct {
	Base Base
	// Path is the file, relative to Base unless absolute.
	Path string
	// Dir is the directory (-C) the command moves to before using Path.
	Dir string
	// Dynamic: Path is only the static prefix of a run-time value.
	Dynamic bool
	// Glob: the last element of Path is a pattern (path.Match).
	Glob bool
	// Tree: the path and everything below it.
	Tree bool
	// Parents: and each directory on the way to it (mkdir -p, rmdir
	// -p), relative paths from their first element.
	Parents bool
	// Into are the names written inside Path when it is an existing
	// directory (cp, mv, ln, install).
	Into []string
	Ops  []Op
	Why  string
	// Word is the index in argv of the word naming the file, or -1.
	Word int
}

// cond holds when one of the options in any is given ("" always), one
// of those in and too, and none of those in none.
type cond struct{ any, and, none string }

func (c cond) holds(r *result) bool {
	for _, l := range []string{c.any, c.and} {
		if l != "" && !r.hasAny(strings.Fields(l)...) {
			return false
		}
	}
	return c.none == "" || !r.hasAny(strings.Fields(c.none)...)
}

// runRow is the prediction column of one command or subcommand.
type runRow struct {
	// unbounded: the command runs code the table cannot see.
	unbounded string
	// whenUnbounded: options that make it so.
	whenUnbounded []unboundedRule
	helpers       []helperRule
	// ops say how the command acts on the files its arguments name:
	// the first rule whose kind, option and cond match an effect;
	// Write effects are written and Delete effects deleted otherwise.
	ops []opsRule
	own []ownRule
}

type unboundedRule struct {
	cond
	why string
}

type helperRule struct {
	cond
	Helper
}

type opsRule struct {
	cond
	kind Kind
	// options, when set, are the options (without dashes) whose effect
	// the rule is for; "-" an operand's.
	options string
	ops     []Op
	tree    bool
	parents bool
	// suffix turns the path into a pattern: the path followed by it.
	suffix string
}

// ownRule is a file a command writes by itself: at path relative to
// base, or beside each file an option writes (beside: the option as
// Effect.Option has it), where path is a pattern of names in the same
// directory, or, with suffixOf, the file's name followed by the value of
// that option (sed -i.bak's backup).
type ownRule struct {
	cond
	base     Base
	path     string
	glob     bool
	tree     bool
	beside   string
	suffixOf string
	ops      []Op
	why      string
}

func (row runRow) file(r *result, e Effect) File {
	f := File{Path: e.Path, Dir: e.Dir, Dynamic: e.Dynamic, Into: e.Into, Why: e.Why, Word: e.Word, Ops: []Op{OpWrite}}
	if e.Kind == Delete {
		f.Ops = []Op{OpDelete}
	}
	opt := strings.TrimLeft(optionOf(e), "-")
	if opt == "" {
		opt = "-"
	}
	for _, o := range row.ops {
		if o.kind != e.Kind || o.options != "" && !strings.Contains(" "+o.options+" ", " "+opt+" ") || !o.holds(r) {
			continue
		}
		f.Ops, f.Tree, f.Parents = o.ops, o.tree, o.parents
		if o.suffix != "" {
			f.Path, f.Glob = f.Path+o.suffix, true
		}
		break
	}
	return f
}

// optionOf is the option an effect comes from as an ownRule's beside
// names it: "-i", or "-" for an operand.
func optionOf(e Effect) string {
	if e.Option == "" {
		return "-"
	}
	return e.Option
}

func (o ownRule) besideFile(r *result, e Effect) (File, bool) {
	f := File{Path: e.Path, Dir: e.Dir, Dynamic: e.Dynamic, Ops: o.ops, Why: o.why, Word: e.Word, Glob: o.glob, Tree: o.tree}
	if o.suffixOf == "" {
		f.Path = path.Join(path.Dir(e.Path), o.path)
		return f, true
	}
	suffix := r.flags[o.suffixOf]
	if v, ok := r.vals[o.suffixOf]; ok {
		suffix = v.Value
	}
	if suffix == "" {
		return File{}, false
	}
	if !strings.Contains(suffix, "*") {
		f.Path = e.Path + suffix
		return f, true
	}
	// GNU sed: each * in the suffix is the file's name; with a / the
	// result is a path of its own.
	name := strings.ReplaceAll(suffix, "*", path.Base(e.Path))
	if strings.Contains(name, "/") {
		f.Path = name
	} else {
		f.Path = path.Join(path.Dir(e.Path), name)
	}
	return f, true
}

var (
	opsWrite    = []Op{OpWrite}
	opsDelete   = []Op{OpDelete}
	opsCopy     = []Op{OpWrite, OpMkdir, OpMetadata}
	opsMove     = []Op{OpWrite, OpMkdir, OpMetadata, OpDelete}
	opsExtract  = []Op{OpWrite, OpMkdir, OpMetadata, OpDelete}
	opsTemp     = []Op{OpWrite, OpDelete}
	opsTouch    = []Op{OpWrite, OpMetadata}
	opsMetadata = []Op{OpMetadata}
)

// plain is the row of a command that starts nothing and writes only
// what its arguments name.
var plain = runRow{}

// decompressors are what GNU tar runs to read a compressed archive,
// which it recognises by its first bytes; rg -z runs the same kind.
var decompressors = []string{"gzip", "bzip2", "xz", "lzma", "lzip", "lzop", "zstd", "compress"}

// tarCompress is how GNU tar names each compression: its options and
// program.
var tarCompress = []struct{ opts, prog string }{
	{"z gzip gunzip ungzip", "gzip"},
	{"j bzip2", "bzip2"},
	{"J xz", "xz"},
	{"lzma", "lzma"},
	{"lzip", "lzip"},
	{"lzop", "lzop"},
	{"zstd", "zstd"},
	{"Z compress uncompress", "compress"},
}

const (
	tarCreate = "c create r append u update A catenate concatenate"
	tarRead   = "t list x extract get d diff compare"
)

func tarHelpers() []helperRule {
	var out []helperRule
	all := ""
	for _, c := range tarCompress {
		all += " " + c.opts
		// Creating: tar runs `/bin/sh -c PROG`, which runs PROG;
		// reading: PROG -d.
		out = append(out,
			helperRule{cond{any: c.opts, and: tarCreate}, Helper{Program: "/bin/sh", Args: []string{"-c", c.prog}, Why: "tar starts the compressor through the shell"}},
			helperRule{cond{any: c.opts, and: tarCreate}, Helper{Program: c.prog, Why: "tar compresses the archive with " + c.prog}},
			helperRule{cond{any: c.opts, none: tarCreate}, Helper{Program: c.prog, Args: []string{"-d"}, Why: "tar decompresses the archive with " + c.prog}})
		if c.prog == "compress" {
			out = append(out, helperRule{cond{any: c.opts, none: tarCreate}, Helper{Program: "gzip", Args: []string{"-d"}, Why: "tar decompresses .Z archives with gzip"}})
		}
	}
	for _, p := range decompressors {
		// Reading an archive without a compression option: tar
		// recognises a compressed one and runs its decompressor.
		out = append(out, helperRule{cond{any: tarRead, none: all + " " + tarCreate}, Helper{Program: p, Args: []string{"-d"}, Why: "tar recognises a compressed archive and decompresses it with " + p}})
		if p == "compress" {
			out = append(out, helperRule{cond{any: tarRead, none: all + " " + tarCreate}, Helper{Program: "gzip", Args: []string{"-d"}, Why: "tar decompresses .Z archives with gzip"}})
		}
		// -a: the compressor the archive's suffix names.
		out = append(out,
			helperRule{cond{any: "a auto-compress", and: tarCreate, none: all}, Helper{Program: "/bin/sh", Args: []string{"-c", p}, Why: "tar -a starts the compressor the suffix names through the shell"}},
			helperRule{cond{any: "a auto-compress", and: tarCreate, none: all}, Helper{Program: p, Why: "tar -a compresses with the program the suffix names"}})
	}
	return out
}

// pager is git's pager, when its output is a terminal.
var pager = helperRule{cond{none: "P no-pager"}, Helper{Pager: true, Why: "git pages its output when it is a terminal"}}

// gitSelf is git starting itself (in each submodule).
var gitSelf = helperRule{Helper: Helper{Program: "git", Where: GitExecPath, AnyArgs: true, Why: "git runs itself in submodules"}}

// gitIndex are the files git writes when it refreshes the index: it
// takes index.lock, then renames it over the index or removes it, and
// does the same in each submodule's git directory.
var gitIndex = []ownRule{
	{base: BaseGitDir, path: "index.lock", ops: opsTemp, why: "git refreshes the index: it takes index.lock"},
	{base: BaseGitDir, path: "index", ops: opsWrite, why: "git refreshes the index: it renames index.lock over it"},
	{base: BaseGitDir, path: "modules", tree: true, ops: opsTemp, why: "git refreshes the index of each submodule"},
}

// lessHistory is what less writes when it quits: its history file,
// through a temporary file beside it (less 590 keeps it in the home
// directory, later ones under ~/.local/state).
func lessHistory(c cond) []ownRule {
	var out []ownRule
	for _, p := range []string{".lesshst", ".lesshs*", ".local/state/lesshst", ".local/state/lesshs*"} {
		out = append(out, ownRule{cond: c, base: BaseHome, path: p, glob: strings.Contains(p, "*"), ops: opsTemp,
			why: "less keeps its history"})
	}
	return out
}

// gitRead is the row of a git subcommand that only reads and shows.
var gitRead = runRow{helpers: []helperRule{pager, gitSelf,
	{cond{any: "show-signature"}, Helper{Program: "gpg", AnyArgs: true, Why: "git checks signatures with gpg"}}},
	own: lessHistory(pager.cond)}

// runRows is the prediction column: each row was checked against what
// the program does (strace on GNU coreutils 9.1, git 2.39, tar 1.34,
// sed 4.9).
var runRows = map[string]runRow{
	"awk": plain, "gawk": plain, "mawk": plain, "nawk": plain,
	"cat": plain, "head": plain, "tail": plain, "wc": plain, "ls": plain, "pwd": plain,
	"echo": plain, "true": plain, "uniq": plain, "shuf": plain, "tee": plain, "xxd": plain,
	"tree": plain, "jq": plain, "xargs": plain, "grep": plain, "diff": plain,
	"less": {own: lessHistory(cond{})}, "more": {own: lessHistory(cond{})},
	// Rows for inspection programs whose options the table may not
	// read yet: they take effect when it does.
	"cut": plain, "nl": plain, "tr": plain, "cmp": plain, "stat": plain, "du": plain, "df": plain,
	"date": plain, "basename": plain, "dirname": plain, "realpath": plain, "readlink": plain,
	"which": plain, "ps": plain, "pgrep": plain, "sleep": plain,
	// file -C writes NAME.mgc in the working directory for each -m
	// NAME (magic.mgc without one).
	"file": {whenUnbounded: []unboundedRule{{cond{any: "z uncompress Z uncompress-noreport"}, "file -z runs decompressors"}},
		ops: []opsRule{{kind: Write, options: "C compile", ops: opsWrite, suffix: "/*.mgc"}}},
	"rg": {helpers: func() []helperRule {
		var out []helperRule
		for _, p := range []string{"gzip", "bzip2", "xz", "lz4", "zstd", "brotli", "uncompress"} {
			out = append(out, helperRule{cond{any: "z search-zip"}, Helper{Program: p, AnyArgs: true, Why: "rg -z decompresses with " + p}})
		}
		return out
	}()},
	"find": {ops: []opsRule{{kind: Delete, ops: opsDelete, tree: true}}},
	"sort": {ops: []opsRule{{kind: Write, options: "T temporary-directory", ops: opsTemp, tree: true}}},
	"sed": {own: []ownRule{
		{beside: "-i", path: "sed*", glob: true, ops: opsTemp, why: "sed -i writes a temporary file beside the file and renames it over the file"},
		{beside: "-i", cond: cond{any: "i in-place"}, suffixOf: "i", ops: opsWrite, why: "sed -i SUFFIX keeps the file under the name with the suffix"},
		{beside: "-i", cond: cond{any: "in-place"}, suffixOf: "in-place", ops: opsWrite, why: "sed -i SUFFIX keeps the file under the name with the suffix"},
	}, ops: []opsRule{{kind: Write, options: "i", ops: []Op{OpWrite, OpDelete}}}},
	"tar": {helpers: tarHelpers(), ops: []opsRule{{kind: Write, options: "x", ops: opsExtract, tree: true}}},
	"cp": {whenUnbounded: []unboundedRule{{cond{any: "b backup S suffix"}, "cp --backup (and -S, which implies it) keeps the files it replaces under names guardrun does not predict"},
		{cond{any: "l link s symbolic-link"}, "cp -l and -s make names through which later writes reach the files copied"}},
		ops: []opsRule{
			{cond: cond{any: "r R recursive a archive"}, kind: Write, ops: opsCopy, tree: true},
			{kind: Write, ops: opsCopy},
		}},
	"mv": {whenUnbounded: []unboundedRule{{cond{any: "b backup S suffix"}, "mv --backup (and -S, which implies it) keeps the files it replaces under names guardrun does not predict"}},
		ops: []opsRule{{kind: Write, ops: opsMove, tree: true}, {kind: Delete, ops: opsDelete, tree: true}}},
	"ln": {whenUnbounded: []unboundedRule{{cond{any: "b backup S suffix"}, "ln --backup (and -S, which implies it) keeps the files it replaces under names guardrun does not predict"}},
		own: []ownRule{{beside: "-", cond: cond{any: "f force"}, path: "Cu*", glob: true, ops: opsTemp, why: "ln -f makes the link under a temporary name beside it and renames it over the old one"}}},
	"install": {whenUnbounded: []unboundedRule{{cond{any: "b backup S suffix"}, "install --backup (and -S, which implies it) keeps the files it replaces under names guardrun does not predict"}},
		helpers: []helperRule{{cond{any: "s strip"}, Helper{Program: "strip", AnyArgs: true, Why: "install -s strips the binaries with strip"}}},
		ops: []opsRule{
			{cond: cond{any: "d directory"}, kind: Write, ops: []Op{OpMkdir, OpMetadata}, parents: true},
			{cond: cond{any: "D"}, kind: Write, ops: opsCopy, parents: true},
			{kind: Write, ops: opsCopy},
		}},
	"mkdir": {ops: []opsRule{
		{cond: cond{any: "p parents"}, kind: Write, ops: []Op{OpMkdir, OpMetadata}, parents: true},
		{kind: Write, ops: []Op{OpMkdir, OpMetadata}},
	}},
	"rmdir": {ops: []opsRule{{cond: cond{any: "p parents"}, kind: Delete, ops: opsDelete, parents: true}}},
	"rm":    {ops: []opsRule{{cond: cond{any: "r R recursive"}, kind: Delete, ops: opsDelete, tree: true}}},
	"touch": {ops: []opsRule{{kind: Write, ops: opsTouch}}},
	"chmod": {ops: []opsRule{
		{cond: cond{any: "R recursive"}, kind: Write, ops: opsMetadata, tree: true},
		{kind: Write, ops: opsMetadata},
	}},
	"split": {ops: []opsRule{{kind: Write, ops: opsWrite, suffix: "*"}}},

	"git diff": {helpers: gitRead.helpers, own: append(slices.Clone(gitIndex), gitRead.own...)}, "git log": gitRead, "git show": gitRead, "git whatchanged": gitRead,
	"git blame": gitRead, "git grep": gitRead, "git shortlog": gitRead,
	"git status": {helpers: []helperRule{gitSelf}, own: gitIndex},
	"git describe": {helpers: []helperRule{gitSelf}, own: func() []ownRule {
		var out []ownRule
		for _, o := range gitIndex {
			o.cond = cond{any: "dirty broken"}
			out = append(out, o)
		}
		return out
	}()},
	"git": plain, "git ls-files": plain, "git ls-tree": plain, "git cat-file": plain, "git rev-parse": plain,
	"git rev-list": plain, "git show-ref": plain, "git version": plain,

	"make":  {unbounded: "make runs the Makefile's recipes, which are the project's code"},
	"gmake": {unbounded: "make runs the Makefile's recipes, which are the project's code"},
	"man":   {unbounded: "man runs a formatting pipeline (preconv, tbl, groff) and a pager, and writes its cache"},
}

// predictOnly are the commands the prediction describes that the option
// table does not (rules judge them as unknown commands): their options
// and what their operands do.
func predictOnly(name string) *spec {
	s := predictSpecs[name]
	if s == nil {
		return nil
	}
	s.init()
	return s
}

var predictSpecs = map[string]*spec{
	"rm": gnu(&spec{Options: Options{Short: "dfiIrRv", AllShort: true,
		Long: "dir force interactive[=] no-preserve-root one-file-system preserve-root[=] recursive verbose"},
		operands: deleteOps("removes the file")}),
	"rmdir": gnu(&spec{Options: Options{Short: "pv", AllShort: true, Long: "ignore-fail-on-non-empty parents verbose"},
		operands: deleteOps("removes the directory")}),
	// jq reads its filter, files and the values of --rawfile and the
	// like; no option writes or runs anything.
	"jq": {custom: func(s *spec, r *result, i int) {}},
}

func deleteOps(why string) func(r *result, ops []opnd) {
	return func(r *result, ops []opnd) {
		for _, o := range ops {
			r.file(Delete, o, "", why)
		}
	}
}
