package cmdsem

import (
	"path"
	"sort"
	"strings"
	"sync"
)

var (
	wr = func(why string) act { return act{Write, why} }
	rd = func(why string) act { return act{Read, why} }
	ex = func(why string) act { return act{Exec, why} }
)

// both files an act under a short letter and a long name.
func both(m map[string]act, short, long string, a act) {
	if short != "" {
		m[short] = a
	}
	if long != "" {
		m[long] = a
	}
}

func acts(pairs ...any) map[string]act {
	m := map[string]act{}
	for i := 0; i+2 < len(pairs)+1; i += 3 {
		both(m, pairs[i].(string), pairs[i+1].(string), pairs[i+2].(act))
	}
	return m
}

// Each command's spec is built on its first lookup, alone: a guardrun
// run looks up one or two commands, and building the whole table cost
// about a seventh of what a `guardrun -c true` allocated. entries is
// static data (names and functions, nothing to run at start-up); built
// keeps what lookups made.
var built struct {
	mu    sync.Mutex
	specs map[string]*spec
}

// lookup returns the named command's spec, or nil when the table does
// not describe it.
func lookup(name string) *spec {
	e := findEntry(name)
	if e == nil {
		return nil
	}
	built.mu.Lock()
	defer built.mu.Unlock()
	if s := built.specs[name]; s != nil {
		return s
	}
	if built.specs == nil {
		built.specs = map[string]*spec{}
	}
	s := e.build()
	built.specs[name] = s
	return s
}

// findEntry finds name in entries, then in projectEntries (each sorted
// by name). A versioned python (python3.12) is python3.
func findEntry(name string) *entry {
	if v, ok := strings.CutPrefix(name, "python3."); ok && v != "" && strings.Trim(v, "0123456789") == "" {
		name = "python3"
	}
	for _, es := range [][]entry{entries[:], projectEntries[:]} {
		i := sort.Search(len(es), func(i int) bool { return es[i].name >= name })
		if i < len(es) && es[i].name == name {
			return &es[i]
		}
	}
	return nil
}

// specs is the whole table, every command looked up (Commands, Catalog).
func specs() map[string]*spec {
	m := make(map[string]*spec, len(entries)+len(projectEntries))
	for _, es := range [][]entry{entries[:], projectEntries[:]} {
		for i := range es {
			m[es[i].name] = lookup(es[i].name)
		}
	}
	return m
}

// entry is one command of the table and how to build its spec.
type entry struct {
	name  string
	build func() *spec
}

// gnu marks a GNU tool's spec: abbreviated long options, options after
// operands, --help and --version.
func gnu(s *spec) *spec {
	s.Abbrev, s.StrictLong, s.Permute = true, true, true
	s.Long += " help version"
	return s
}

// readOps judges every operand but "-" as a read.
func readOps(r *result, ops []opnd) {
	for _, o := range ops {
		if o.Value != "-" {
			r.file(Read, o, "", "reads the file")
		}
	}
}

// writeOps judges every operand as a write (tee's "-" is its output).
func writeOps(why string) func(r *result, ops []opnd) {
	return func(r *result, ops []opnd) {
		for _, o := range ops {
			if o.Static && (o.Value == "-" && r.name == "tee") {
				continue
			}
			r.file(Write, o, "", why)
		}
	}
}

// entries are the commands of the table, sorted by name. Keep in sync
// with README.md ("What options mean") and the tests in table_test.go,
// which exercise every write and exec option.
var entries = [...]entry{
	{"awk", func() *spec {
		return &spec{custom: awkCmd}
	}},
	{"basename", newBasenameSpec},
	{"cat", func() *spec {
		return gnu(&spec{Options: Options{Short: "AbeEnstTuv", AllShort: true, Long: "number number-nonblank show-all show-ends show-nonprinting show-tabs squeeze-blank"}, operands: readOps})
	}},
	{"cd", func() *spec { return &spec{custom: cdCmd, readOnly: true} }},
	{"chmod", func() *spec {
		return gnu(&spec{Options: Options{Short: "cfvRrwxXstugoa0123456789", AllShort: true,
			Long: "changes no-preserve-root preserve-root quiet recursive reference= silent verbose"},
			do: acts("", "reference", rd("reads the file's mode")),
			operands: func(r *result, ops []opnd) {
				if _, ok := r.seen("reference"); !ok && len(ops) > 0 {
					ops = ops[1:] // the mode
				}
				writeOps("changes the file's mode")(r, ops)
			}, writesOperands: true})
	}},
	{"cmp", newCmpSpec},
	{"cp", func() *spec {
		return gnu(&spec{Options: Options{Short: "abdfHilLnPpRrsS:t:TuvxZ", AllShort: true,
			Long: "archive attributes-only backup[=] context[=] copy-contents dereference force interactive link no-clobber no-dereference no-preserve= no-target-directory one-file-system parents preserve[=] recursive reflink[=] remove-destination sparse= strip-trailing-slashes suffix= symbolic-link target-directory= update[=] verbose debug"},
			do:       acts("t", "target-directory", act{"target", "copies the files into the directory"}),
			operands: destOps("copies", false), writesOperands: true})
	}},
	{"curl", newCurlSpec},
	{"cut", newCutSpec},
	{"date", newDateSpec},
	{"dd", func() *spec {
		return &spec{custom: func(s *spec, r *result, i int) {
			for ; i < len(r.argv); i++ {
				a := r.argv[i]
				if !a.Static {
					r.unknown(i, "", "dd: an operand known only at run time may name a file")
					continue
				}
				if v, ok := strings.CutPrefix(a.Value, "of="); ok {
					r.file(Write, opnd{Arg{Value: v, Static: true}, i}, "of=", "writes its output to the file")
				} else if v, ok := strings.CutPrefix(a.Value, "if="); ok {
					r.file(Read, opnd{Arg{Value: v, Static: true}, i}, "if=", "reads the file")
				}
			}
		}}
	}},
	{"df", newDfSpec},
	{"diff", func() *spec {
		return gnu(&spec{Options: Options{Short: "abBcC:dD:eEF:hiI:lnNpqrsS:tTuU:vwWx:X:Zy0123456789", AllShort: true,
			Long: "brief color[=] context[=] ed exclude= exclude-from= expand-tabs from-file= horizon-lines= ifdef= ignore-all-space ignore-blank-lines ignore-case ignore-file-name-case ignore-matching-lines= ignore-space-change ignore-tab-expansion ignore-trailing-space initial-tab label= left-column line-format= minimal new-file no-dereference no-ignore-file-name-case normal paginate palette= rcs recursive report-identical-files show-c-function show-function-line= side-by-side speed-large-files starting-file= strip-trailing-cr suppress-blank-empty suppress-common-lines tabsize= text to-file= unidirectional-new-file unified[=] width= old-group-format= new-group-format= changed-group-format= unchanged-group-format= old-line-format= new-line-format= unchanged-line-format= no-ignore-file-name-case"},
			do: acts("X", "exclude-from", rd("reads exclusion patterns from the file"),
				"", "from-file", rd("compares the file"), "", "to-file", rd("compares the file"),
				"l", "paginate", ex("runs pr on the output")),
			operands: readOps})
	}},
	{"dirname", newDirnameSpec},
	{"du", newDuSpec},
	{"echo", newNoOptionsSpec},
	{"file", func() *spec {
		return &spec{Options: Options{Short: "bcCdEhiklLNnprsSvzZ0e:f:F:m:P:", Permute: true, Abbrev: true,
			Long: "apple brief checking-printout compile debug dereference exclude= exclude-quiet= extension files-from= keep-going list magic-file= mime mime-encoding mime-type no-buffer no-dereference no-pad no-sandbox parameter= preserve-date print0 raw separator= special-files uncompress uncompress-noreport help version"},
			do: acts("C", "compile", wr("writes a compiled magic file into the working directory"),
				"f", "files-from", rd("reads the names of the files"), "m", "magic-file", rd("reads the magic file"))}
	}},
	{"find", func() *spec {
		return &spec{custom: findCmd}
	}},
	{"gawk", func() *spec {
		return &spec{custom: awkCmd}
	}},
	{"git", newGitSpec},
	{"gmake", newMakeSpec},
	{"go", newGoSpec},
	{"grep", func() *spec {
		return gnu(&spec{Options: Options{Short: "A:B:C:D:d:e:f:m:EFGPiyvwxcLloqsbHhnTZuzUraIR0123456789", AllShort: true,
			Long: "after-context= basic-regexp before-context= binary binary-files= byte-offset color[=] colour[=] context= count dereference-recursive devices= directories= exclude= exclude-dir= exclude-from= extended-regexp file= files-with-matches files-without-match fixed-strings group-separator= ignore-case include= initial-tab invert-match label= line-buffered line-number line-regexp max-count= no-filename no-group-separator no-ignore-case no-messages null null-data only-matching perl-regexp quiet recursive regexp= silent text with-filename word-regexp"},
			do: acts("f", "file", rd("reads patterns from the file"), "", "exclude-from", rd("reads exclusion patterns from the file")),
			operands: func(r *result, ops []opnd) {
				if !r.hasAny("e", "regexp", "f", "file") && len(ops) > 0 {
					ops = ops[1:] // the pattern
				}
				if r.hasAny("r", "R", "recursive", "dereference-recursive") {
					readOrHere(r, ops) // grep -r searches . without files
					return
				}
				readOps(r, ops)
			}})
	}},
	{"head", func() *spec {
		return gnu(&spec{Options: Options{Short: "c:n:qvz0123456789", AllShort: true, Long: "bytes= lines= quiet silent verbose zero-terminated"}, operands: readOps})
	}},
	{"install", func() *spec {
		return gnu(&spec{Options: Options{Short: "bcCdDg:m:o:pst:TvS:Z", AllShort: true,
			Long: "backup[=] compare context[=] directory group= mode= no-target-directory owner= preserve-context preserve-timestamps strip strip-program= suffix= target-directory= verbose debug"},
			do: acts("t", "target-directory", act{"target", "installs the files into the directory"},
				"", "strip-program", ex("runs the program to strip binaries")),
			operands: func(r *result, ops []opnd) {
				if r.hasAny("d", "directory") {
					writeOps("creates the directory")(r, ops)
					return
				}
				destOps("installs", false)(r, ops)
			}, writesOperands: true})
	}},
	{"jq", func() *spec { return &spec{custom: jqCmd, readOnly: true} }},
	{"less", newLessSpec},
	{"ln", func() *spec {
		return gnu(&spec{Options: Options{Short: "bdfFilLnPrsS:t:Tv", AllShort: true,
			Long: "backup[=] directory force interactive logical no-dereference no-target-directory physical relative suffix= symbolic target-directory= verbose"},
			do:       acts("t", "target-directory", act{"target", "creates links in the directory"}),
			operands: lnOps, writesOperands: true})
	}},
	{"ls", func() *spec {
		return gnu(&spec{Options: Options{Short: "aAbBcCdDfFgGhHiklLmnNopqQrRsStuUvwxXZ1I:T:w:", AllShort: true,
			Long: "all almost-all author block-size= classify[=] color[=] context dereference dereference-command-line dereference-command-line-symlink-to-dir directory dired escape file-type format= full-time group-directories-first hide= hide-control-chars human-readable hyperlink[=] ignore= ignore-backups indicator-style= inode kibibytes literal no-group numeric-uid-gid quote-name quoting-style= recursive reverse show-control-chars si size sort= tabsize= time= time-style= width= zero"},
			operands: readOrHere})
	}},
	{"make", newMakeSpec},
	{"man", func() *spec {
		return &spec{Options: Options{Short: "C:dDwWkKfl:LmMpPr:S:s:e:E:ZTHXRgaIiutBcn", Permute: true, Abbrev: true,
			Long: "all apropos ascii catman config-file= debug default ditroff encoding= extension= global-apropos gxditview[=] html[=] ignore-case local-file locale= location location-cat manpath= match-case names-only nh nj no-hyphenation no-justification no-subpages pager= path preprocessor= prompt= recode= regex sections= systems= troff troff-device[=] update usage warnings[=] whatis where where-cat wildcard help version"},
			do: acts("P", "pager", ex("runs the program as the pager"),
				"H", "html", ex("runs a web browser"),
				"", "gxditview", ex("runs a viewer program"),
				"p", "preprocessor", act{Unknown, "chooses the preprocessors man runs"},
				"C", "config-file", act{Unknown, "reads configuration that can name programs"},
				"l", "local-file", act{Unknown, "formats a local file, which can run programs through troff requests"}),
			env: []string{"MANPAGER", "MANOPT", "MANROFFOPT", "GROFF_*", "BROWSER"}}
	}},
	{"mawk", func() *spec {
		return &spec{custom: awkCmd}
	}},
	{"mkdir", func() *spec {
		return gnu(&spec{Options: Options{Short: "m:pvZ", AllShort: true, Long: "context[=] mode= parents verbose"},
			operands: writeOps("creates the directory"), writesOperands: true})
	}},
	{"more", newLessSpec},
	{"mv", func() *spec {
		return gnu(&spec{Options: Options{Short: "bfinS:t:TuvZ", AllShort: true,
			Long: "backup[=] context force interactive no-clobber no-target-directory strip-trailing-slashes suffix= target-directory= update[=] verbose debug exchange no-copy"},
			do:       acts("t", "target-directory", act{"target", "moves the files into the directory"}),
			operands: destOps("moves", true), writesOperands: true})
	}},
	{"nawk", func() *spec {
		return &spec{custom: awkCmd}
	}},
	{"nl", newNlSpec},
	{"npm", newNpmSpec},
	{"patch", func() *spec {
		return gnu(&spec{Options: Options{Short: "bB:cd:D:eEfF:g:i:lnNo:p:r:RstTuvVY:z:Z", AllShort: true,
			Long: "backup backup-if-mismatch basename-prefix= batch binary context directory= dry-run ed force forward fuzz= get= ifdef= ignore-whitespace input= merge no-backup-if-mismatch normal output= posix prefix= quiet quoting-style= read-only= reject-file= reject-format= remove-empty-files reverse set-time set-utc silent strip= suffix= unified verbose version-control="},
			do: acts("o", "output", wr("writes the patched file"), "r", "reject-file", wr("writes rejected hunks to the file"),
				"d", "directory", act{chdir, ""}, "i", "input", rd("reads the patch"),
				"", "ed", act{Unknown, "feeds the patch to ed, which can run commands"}),
			operands: func(r *result, ops []opnd) {
				if len(ops) > 0 {
					r.file(Write, ops[0], "", "patches the file")
				} else if !r.hasAny("dry-run") {
					r.add(Effect{Kind: Write, Word: 0, Path: "(named inside the patch)", Dynamic: true, Why: "patches the files the patch names"})
				}
				if len(ops) > 1 {
					r.file(Read, ops[1], "", "reads the patch")
				}
			}, writesOperands: true})
	}},
	{"pgrep", newPgrepSpec},
	{"pip", newPipSpec},
	{"pip3", newPipSpec},
	{"popd", func() *spec { return &spec{custom: cdCmd, readOnly: true} }},
	{"ps", newPsSpec},
	{"pushd", func() *spec { return &spec{custom: cdCmd, readOnly: true} }},
	{"pwd", func() *spec {
		return &spec{Options: Options{Short: "LP", AllShort: true, Long: "help version logical physical", StrictLong: true}}
	}},
	{"python", newPythonSpec},
	{"python2", newPythonSpec},
	{"python3", newPythonSpec},
	{"readlink", newReadlinkSpec},
	{"realpath", newRealpathSpec},
	{"rg", func() *spec {
		return &spec{Options: Options{Abbrev: false, StrictLong: true, Permute: true,
			Short: "A:B:C:E:f:g:j:l:M:m:r:t:T:d:e:0123456789abcFHhiIjLnNopqsSuUvVwxz.",
			Long:  rgLong},
			do: acts("", "pre", ex("runs the program on every file searched"),
				"", "hostname-bin", ex("runs the program to find the host name"),
				"f", "file", rd("reads patterns from the file"),
				"", "ignore-file", rd("reads ignore rules from the file")),
			env: []string{"RIPGREP_CONFIG_PATH"},
			operands: func(r *result, ops []opnd) {
				if !r.hasAny("e", "regexp", "f", "file", "files", "type-list") && len(ops) > 0 {
					ops = ops[1:]
				}
				readOps(r, ops)
			}}
	}},
	{"sed", func() *spec {
		return &spec{custom: sedCmd}
	}},
	{"shuf", func() *spec {
		return gnu(&spec{Options: Options{Short: "ei:n:o:rz", AllShort: true,
			Long: "echo head-count= input-range= output= random-source= repeat zero-terminated"},
			do: acts("o", "output", wr("writes its output to the file"), "", "random-source", rd("reads random bytes from the file")),
			operands: func(r *result, ops []opnd) {
				if !r.hasAny("e", "echo", "i", "input-range") {
					readOps(r, ops)
				}
			}})
	}},
	{"sleep", newSleepSpec},
	{"sort", func() *spec {
		return gnu(&spec{Options: Options{Short: "bdfgiMhnRrVcCk:mo:sS:t:T:uz", AllShort: true,
			Long: "batch-size= buffer-size= check[=] compress-program= debug dictionary-order field-separator= files0-from= general-numeric-sort human-numeric-sort ignore-case ignore-leading-blanks ignore-nonprinting key= merge month-sort numeric-sort output= parallel= random-sort random-source= reverse sort= stable temporary-directory= unique version-sort zero-terminated"},
			do: acts("o", "output", wr("writes the sorted output to the file"),
				"T", "temporary-directory", wr("writes temporary files into the directory"),
				"", "compress-program", ex("runs the program to compress temporary files"),
				"", "files0-from", rd("reads the names of the files to sort"),
				"", "random-source", rd("reads random bytes from the file")),
			operands: readOps})
	}},
	{"split", func() *spec {
		return gnu(&spec{Options: Options{Short: "a:b:C:del:n:t:x", AllShort: true,
			Long: "additional-suffix= bytes= elide-empty-files filter= hex-suffixes[=] line-bytes= lines= number= numeric-suffixes[=] separator= suffix-length= unbuffered verbose"},
			do: acts("", "filter", ex("pipes each piece through a shell command")),
			operands: func(r *result, ops []opnd) {
				prefix := opnd{Arg{Value: "x", Static: true}, 0}
				if len(ops) > 1 {
					prefix = ops[1]
				}
				if len(ops) > 0 && ops[0].Value != "-" {
					r.file(Read, ops[0], "", "reads the file")
				}
				if !r.hasAny("filter") {
					r.file(Write, prefix, "", "writes the pieces to files starting with this name")
				}
			}, writesOperands: true})
	}},
	{"stat", newStatSpec},
	{"tail", func() *spec {
		return gnu(&spec{Options: Options{Short: "c:fFn:qs:vz0123456789", AllShort: true,
			Long: "bytes= follow[=] lines= max-unchanged-stats= pid= quiet retry silent sleep-interval= verbose zero-terminated"}, operands: readOps})
	}},
	{"tar", newTarSpec},
	{"tee", func() *spec {
		return gnu(&spec{Options: Options{Short: "aip", AllShort: true, Long: "append ignore-interrupts output-error[=]"},
			operands: writeOps("copies its input into the file"), writesOperands: true})
	}},
	{"touch", func() *spec {
		return gnu(&spec{Options: Options{Short: "acd:fhmr:t:", AllShort: true,
			Long: "date= no-create no-dereference reference= time="},
			do: acts("r", "reference", rd("reads the file's times")), operands: writeOps("creates the file or changes its times"), writesOperands: true})
	}},
	{"tr", newTrSpec},
	{"tree", newTreeSpec},
	{"true", newNoOptionsSpec},
	{"type", newTypeSpec},
	{"uniq", func() *spec {
		return gnu(&spec{Options: Options{Short: "cdDf:is:uw:z", AllShort: true,
			Long: "all-repeated[=] check-chars= count group[=] ignore-case repeated skip-chars= skip-fields= unique zero-terminated"},
			operands: inOut("writes its output to the second operand"), writesOperands: true})
	}},
	{"wc", func() *spec {
		return gnu(&spec{Options: Options{Short: "clLmw", AllShort: true, Long: "bytes chars files0-from= lines max-line-length words total="},
			do: acts("", "files0-from", rd("reads the names of the files to count")), operands: readOps})
	}},
	{"wget", newWgetSpec},
	{"which", newWhichSpec},
	{"xargs", func() *spec {
		return gnu(&spec{Options: Options{Short: "0a:d:E:e::I:i::L:l::n:oP:prs:tx", AllShort: true,
			Long: "arg-file= delimiter= eof[=] exit interactive max-args= max-chars= max-lines= max-procs= no-run-if-empty null open-tty process-slot-var= replace[=] show-limits verbose"},
			// xargs's command is reported by shellparse as its own
			// command; its -a file as a read.
			custom: func(s *spec, r *result, i int) {
				s.scanFrom(r, i, false)
			}})
	}},
	{"xxd", func() *spec {
		return &spec{custom: xxdCmd, writesOperands: true}
	}},
}

// hasAny reports whether one of the options was given.
func (r *result) hasAny(names ...string) bool {
	for _, n := range names {
		if _, ok := r.flags[n]; ok {
			return true
		}
	}
	return false
}

// destOps: the last operand (or -t DIR) is written; it may be an existing
// directory that receives the sources by their base names. mv also
// removes its sources.
func destOps(verb string, removes bool) func(r *result, ops []opnd) {
	return func(r *result, ops []opnd) {
		srcs := ops
		var to *opnd // where mv moves its sources
		if r.targetDir == nil && !r.hasAny("T", "no-target-directory") || r.targetDir == nil && len(ops) > 2 {
			if len(ops) < 2 {
				return
			}
			srcs = ops[:len(ops)-1]
			dest := ops[len(ops)-1]
			to = &dest
			r.file(Write, dest, "", verb+" files to this path")
			r.out[len(r.out)-1].Into = baseNames(srcs)
		} else if r.targetDir != nil {
			to = r.targetDir
			for i := range r.out {
				if r.out[i].Word == r.targetDir.idx && r.out[i].Kind == Write {
					r.out[i].Into = baseNames(srcs)
				}
			}
		} else if len(ops) == 2 {
			srcs = ops[:1]
			to = &ops[1]
			r.file(Write, ops[1], "", verb+" the file to this path")
		}
		for _, s := range srcs {
			if removes {
				r.file(Delete, s, "", "moves the file away")
				if to != nil && to.Static {
					// The file lives on at the destination: policy
					// judges the move by where it goes.
					r.out[len(r.out)-1].MovedTo = to.Value
				}
			} else {
				r.file(Read, s, "", "reads the file")
			}
		}
	}
}

func lnOps(r *result, ops []opnd) {
	if r.targetDir == nil && len(ops) == 1 {
		o := ops[0]
		o.Value = path.Base(o.Value)
		r.file(Write, o, "", "creates a link in the working directory")
		return
	}
	destOps("links", false)(r, ops)
	// The link targets are not read by ln.
	out := r.out[:0]
	for _, e := range r.out {
		if e.Kind != Read {
			out = append(out, e)
		}
	}
	r.out = out
}

func baseNames(ops []opnd) []string {
	var out []string
	for _, o := range ops {
		if !o.Static {
			return nil
		}
		out = append(out, path.Base(strings.TrimRight(o.Value, "/")))
	}
	return out
}

const rgLong = "after-context= auto-hybrid-regex before-context= binary block-buffered byte-offset case-sensitive color= colors= column context= context-separator= count count-matches crlf debug dfa-size-limit= encoding= engine= field-context-separator= field-match-separator= file= files files-with-matches files-without-match fixed-strings follow generate= glob= glob-case-insensitive heading hidden hostname-bin= hyperlink-format= iglob= ignore-case ignore-file= ignore-file-case-insensitive include-zero invert-match json line-buffered line-number line-regexp max-columns= max-columns-preview max-count= max-depth= max-filesize= maxdepth= mmap multiline multiline-dotall no-block-buffered no-byte-offset no-column no-config no-context-separator no-crlf no-encoding no-filename no-fixed-strings no-follow no-glob-case-insensitive no-heading no-hidden no-ignore no-ignore-dot no-ignore-exclude no-ignore-files no-ignore-global no-ignore-messages no-ignore-parent no-ignore-vcs no-include-zero no-invert-match no-line-buffered no-line-number no-max-columns-preview no-messages no-mmap no-multiline no-multiline-dotall no-one-file-system no-pcre2 no-pcre2-unicode no-pre no-require-git no-search-zip no-sort-files no-text no-trim no-unicode null null-data one-file-system only-matching passthru passthrough path-separator= pcre2 pcre2-version pre= pre-glob= pretty quiet regex-size-limit= regexp= replace= search-zip smart-case sort= sort-files sortr= stats stop-on-nonmatch text threads= trim type= type-add= type-clear= type-list type-not= unrestricted vimgrep with-filename word-regexp help version"
