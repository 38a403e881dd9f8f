package cmdsem

import (
	"fmt"
	"strings"
)

// The programs of everyday inspection: they read files and print, and
// the few options that make them write, run something or set the clock
// are listed so that those ask.

func newCutSpec() *spec {
	return gnu(&spec{Options: Options{Short: "b:c:d:f:nsz", AllShort: true,
		Long: "bytes= characters= delimiter= fields= complement only-delimited output-delimiter= zero-terminated"},
		operands: readOps})
}

func newNlSpec() *spec {
	return gnu(&spec{Options: Options{Short: "b:d:f:h:i:l:n:ps:v:w:", AllShort: true,
		Long: "body-numbering= section-delimiter= footer-numbering= header-numbering= line-increment= join-blank-lines= number-format= no-renumber number-separator= starting-line-number= number-width="},
		operands: readOps})
}

// tr reads only its standard input; its operands are sets of characters.
func newTrSpec() *spec {
	return gnu(&spec{Options: Options{Short: "cCdst", AllShort: true, Long: "complement delete squeeze-repeats truncate-set1"}})
}

// cmp FILE1 [FILE2 [SKIP1 [SKIP2]]]: the skips are numbers.
func newCmpSpec() *spec {
	return gnu(&spec{Options: Options{Short: "bi:ln:sv", AllShort: true, Long: "print-bytes ignore-initial= verbose bytes= quiet silent"},
		operands: func(r *result, ops []opnd) { readOps(r, ops[:min(2, len(ops))]) }})
}

// stat and du print what they find about the files they are given
// (names, sizes, times): a denied path is refused as a read is.
func newStatSpec() *spec {
	return gnu(&spec{Options: Options{Short: "Lfc:t", AllShort: true, Long: "dereference file-system cached= format= printf= terse"},
		operands: readOps})
}

func newDuSpec() *spec {
	return gnu(&spec{Options: Options{Short: "0abB:cDd:HhklLmPsSt:xX:", AllShort: true,
		Long: "null all apparent-size block-size= bytes total dereference-args max-depth= human-readable inodes dereference count-links no-dereference separate-dirs si summarize threshold= time[=] time-style= exclude-from= exclude= one-file-system files0-from="},
		do:       acts("X", "exclude-from", rd("reads exclusion patterns from the file"), "", "files0-from", rd("reads the names of the files to measure")),
		operands: readOrHere})
}

// df names file systems by a file on them; it reads none.
func newDfSpec() *spec {
	return gnu(&spec{Options: Options{Short: "aB:hHiklPt:Tx:v", AllShort: true,
		Long: "all block-size= human-readable si inodes local no-sync output[=] portability sync total type= print-type exclude-type="}})
}

// date prints the time; -s and an operand that is not +FORMAT set the
// system clock.
func newDateSpec() *spec {
	return gnu(&spec{Options: Options{Short: "d:f:I::r:Rs:u", AllShort: true,
		Long: "date= debug file= iso-8601[=] resolution rfc-email rfc-822 rfc-2822 rfc-3339= reference= set= universal utc"},
		do: acts("f", "file", rd("reads dates from the file (and prints the lines it cannot read)"),
			"r", "reference", rd("reads the file's time"),
			"s", "set", act{Unknown, "sets the system clock"}),
		operands: func(r *result, ops []opnd) {
			for _, o := range ops {
				if !strings.HasPrefix(o.Value, "+") {
					r.unknown(o.idx, "", "date: an operand that is not +FORMAT sets the system clock")
				}
			}
		}})
}

func newBasenameSpec() *spec {
	return gnu(&spec{Options: Options{Short: "as:z", AllShort: true, Long: "multiple suffix= zero"}})
}

func newDirnameSpec() *spec {
	return gnu(&spec{Options: Options{Short: "z", AllShort: true, Long: "zero"}})
}

// realpath and readlink resolve names; they read no file's content.
func newRealpathSpec() *spec {
	return gnu(&spec{Options: Options{Short: "emLPqsz", AllShort: true,
		Long: "canonicalize-existing canonicalize-missing logical physical quiet relative-to= relative-base= strip no-symlinks zero"}})
}

func newReadlinkSpec() *spec {
	return gnu(&spec{Options: Options{Short: "efmnqsvz", AllShort: true,
		Long: "canonicalize canonicalize-existing canonicalize-missing no-newline quiet silent verbose zero"}})
}

// which (Debian's, and GNU which's long options) and the type builtin
// only look names up.
func newWhichSpec() *spec {
	return &spec{Options: Options{Short: "as", AllShort: true, StrictLong: true,
		Long: "all read-alias skip-alias read-functions skip-functions skip-dot skip-tilde show-dot show-tilde tty-only version help"}}
}

func newTypeSpec() *spec {
	return &spec{Options: Options{Short: "afptP", AllShort: true}}
}

// ps reads the process table; none of its options, in any of its three
// styles, writes or runs anything.
func newPsSpec() *spec {
	return &spec{Options: Options{Permute: true}}
}

// pgrep lists processes (pkill, which signals them, is another
// program).
func newPgrepSpec() *spec {
	return &spec{Options: Options{Short: "d:lavwcfg:G:inoO:P:s:t:u:U:xF:Lr:AhV", AllShort: true, Abbrev: true, StrictLong: true, Permute: true,
		Long: "delimiter= list-name list-full inverse lightweight count full pgroup= group= ignore-case newest oldest older= parent= session= terminal= euid= uid= exact pidfile= logpidfile runstates= ignore-ancestors cgroup= ns= nslist= help version"},
		do: acts("F", "pidfile", rd("reads process ids from the file"))}
}

func newSleepSpec() *spec {
	return gnu(&spec{})
}

// newNoOptionsSpec is a program that prints its arguments and reads no
// option from them (echo's -n and -e only change how it prints).
func newNoOptionsSpec() *spec {
	return &spec{readOnly: true, custom: func(s *spec, r *result, i int) {}}
}

// readOrHere judges the operands as reads, or the working directory when
// there are none (ls, du, tree, find list it).
func readOrHere(r *result, ops []opnd) {
	if len(ops) == 0 {
		r.file(Read, opnd{Arg{Value: ".", Static: true}, 0}, "", "lists the working directory")
		return
	}
	readOps(r, ops)
}

// cdCmd: cd, pushd and popd move the shell (the analysis follows where
// to); the directory they enter is judged as a read, so that a denied
// one is refused. pushd +N and popd rotate the stack.
func cdCmd(s *spec, r *result, i int) {
	for ; i < len(r.argv); i++ {
		a := r.argv[i]
		v := a.Value
		if !a.Static {
			return // a run-time directory: the analysis asks for what follows
		}
		switch {
		case v == "--":
			i++
		case v == "-" || v == "+" || !strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "+"):
		case isDigits(v[1:]) || v == "-n":
			continue // a stack entry, or popd -n
		default:
			continue // -L, -P, -e, -@
		}
		break
	}
	if i < len(r.argv) && r.argv[i].Static && r.argv[i].Value != "-" && !strings.HasPrefix(r.argv[i].Value, "+") {
		r.file(Read, opnd{r.argv[i], i}, "", "changes into the directory")
	}
}

// jqCmd: jq reads JSON and prints; it writes no file and runs nothing.
// Its options take one value (-f, -L, --indent) or two (--arg NAME V,
// --rawfile NAME FILE); the files it reads are judged by deny.
func jqCmd(s *spec, r *result, i int) {
	filter := false
	args := false
	for ; i < len(r.argv); i++ {
		a := r.argv[i]
		v := a.Value
		if !a.Static {
			if strings.HasPrefix(v, "-") || v == "" {
				continue // an option not known until run time: jq has none that writes
			}
			if filter && !args {
				r.file(Read, opnd{a, i}, "", "reads the file")
			}
			filter = true
			continue
		}
		switch {
		case v == "--args" || v == "--jsonargs":
			args = true
		case v == "-f" || v == "--from-file":
			if i+1 < len(r.argv) {
				i++
				r.file(Read, opnd{r.argv[i], i}, v, "reads the jq program from the file")
			}
			filter = true
		case v == "-L":
			if i+1 < len(r.argv) {
				i++
				r.file(Read, opnd{r.argv[i], i}, v, "reads jq modules from the directory")
			}
		case strings.HasPrefix(v, "-L") && !strings.HasPrefix(v, "--"):
			r.file(Read, opnd{Arg{Value: v[2:], Static: true}, i}, "-L", "reads jq modules from the directory")
		case v == "--indent":
			i++
		case v == "--arg" || v == "--argjson":
			i += 2
		case v == "--slurpfile" || v == "--rawfile" || v == "--argfile":
			if i+2 < len(r.argv) {
				r.file(Read, opnd{r.argv[i+2], i + 2}, v, "reads the file into a variable")
			}
			i += 2
		case v == "--run-tests":
			if i+1 < len(r.argv) && !strings.HasPrefix(r.argv[i+1].Value, "-") {
				i++
				r.file(Read, opnd{r.argv[i], i}, v, "reads tests from the file")
			}
		case v == "-" || !strings.HasPrefix(v, "-"):
			if filter && !args && v != "-" {
				r.file(Read, opnd{a, i}, "", "reads the file")
			}
			filter = true
		}
	}
}

// xxdValue are xxd's options that take a value, with the rest of their
// long spelling: -c 8, -c8 and -cols 8 alike.
var xxdValue = map[byte]string{'c': "ols", 'g': "roup", 'l': "en", 'n': "ame", 'o': "ffset", 's': "eek"}

// xxdCmd reads xxd's options as xxd does: one option per word, known by
// its first letter (-a and -autoskip alike, --cols as -cols), options
// only before the first operand (xxd f -n writes a file named -n); then
// INFILE and OUTFILE, which it writes.
func xxdCmd(s *spec, r *result, i int) {
	for ; i < len(r.argv); i++ {
		a := r.argv[i]
		if !a.Static {
			if mayBeOption(a) || a.Glob {
				// An option, the input or several files: which word
				// is the output is not known.
				r.add(Effect{Kind: Write, Word: i, Path: "(run-time value)", Dynamic: true,
					Why: "writes its second operand, and which word that is is not known until run time"})
				return
			}
			break
		}
		v := a.Value
		if v == "--" {
			i++
			break
		}
		pp := v
		if strings.HasPrefix(v, "--") {
			pp = v[1:]
		}
		if len(pp) < 2 || pp[0] != '-' {
			break
		}
		c := pp[1]
		switch {
		case c == 'c' && strings.HasPrefix(pp[2:], "apitalize"):
		case xxdValue[c] != "":
			if len(pp) == 2 || strings.HasPrefix(pp[2:], xxdValue[c]) {
				i++ // the value is the next word
				if i < len(r.argv) && !r.argv[i].Static && r.argv[i].Glob {
					r.add(Effect{Kind: Write, Word: i, Path: "(run-time value)", Dynamic: true,
						Why: "writes its second operand, and which word that is is not known until run time"})
					return
				}
			}
		case strings.IndexByte("abCdeEipru", c) >= 0:
		default:
			return // -h, -v and unknown letters print and exit
		}
	}
	ops := make([]opnd, 0, 2)
	for ; i < len(r.argv) && len(ops) < 2; i++ {
		ops = append(ops, opnd{r.argv[i], i})
	}
	inOut("writes its output to the second operand")(r, ops)
}

// tree 2.x lists directories; -o writes the listing to a file and -R
// (with -H) writes a listing into every directory it visits.
func newTreeSpec() *spec {
	return &spec{Options: Options{Short: "adlfxL:RP:I:qNQpugshDFvtcUriASnCXJH:T:o:", AllShort: true, StrictLong: true, Permute: true,
		Long: "gitignore gitfile= ignore-case matchdirs metafirst prune info infofile= noreport charset= filelimit= timefmt= du si inodes device dirsfirst filesfirst sort= nolinks hintro= houtro= fromfile fromtabfile fflinks opt-toggle hyperlink scheme= authority= version help"},
		do: acts("o", "", wr("writes the listing to the file"),
			"R", "", act{Unknown, "writes a listing into every directory it visits"},
			"", "gitfile", rd("reads ignore patterns from the file"),
			"", "infofile", rd("reads file comments from the file"),
			"", "hintro", rd("copies the file into its output"), "", "houtro", rd("copies the file into its output")),
		operands: readOrHere}
}

// findPrimaries are GNU find's primaries (tests, actions, options and
// operators) and how many words follow each. -exec and its kind run
// the command up to ; or {} + (package shellparse reports it as a
// command of its own); the rest say what find does with the files.
var findPrimaries = map[string]int{
	"(": 0, ")": 0, "!": 0, ",": 0, "-not": 0, "-a": 0, "-and": 0, "-o": 0, "-or": 0,
	"-daystart": 0, "-depth": 0, "-d": 0, "-follow": 0, "-ignore_readdir_race": 0, "-mount": 0,
	"-noignore_readdir_race": 0, "-noleaf": 0, "-nowarn": 0, "-warn": 0, "-xdev": 0, "-help": 0, "--help": 0, "-version": 0, "--version": 0,
	"-regextype": 1, "-maxdepth": 1, "-mindepth": 1, "-files0-from": 1,
	"-amin": 1, "-anewer": 1, "-atime": 1, "-cmin": 1, "-cnewer": 1, "-context": 1, "-ctime": 1, "-fstype": 1,
	"-gid": 1, "-group": 1, "-ilname": 1, "-iname": 1, "-inum": 1, "-ipath": 1, "-iregex": 1, "-iwholename": 1,
	"-links": 1, "-lname": 1, "-mmin": 1, "-mtime": 1, "-name": 1, "-newer": 1, "-path": 1, "-perm": 1,
	"-regex": 1, "-samefile": 1, "-size": 1, "-type": 1, "-uid": 1, "-used": 1, "-user": 1, "-wholename": 1, "-xtype": 1,
	"-empty": 0, "-executable": 0, "-false": 0, "-nogroup": 0, "-nouser": 0, "-readable": 0, "-true": 0, "-writable": 0,
	"-delete": 0, "-ls": 0, "-print": 0, "-print0": 0, "-printf": 1, "-prune": 0, "-quit": 0,
	"-fls": 1, "-fprint": 1, "-fprint0": 1, "-fprintf": 2,
	"-exec": -1, "-execdir": -1, "-ok": -1, "-okdir": -1,
}

// findCmd reads find's command line as find does: options, the starting
// points (read, . when there are none), then the expression. -delete
// removes what it finds under the starting points; an unknown primary,
// or a word known only at run time where one stands, may do anything.
// The files -fprint, -fls and -fprintf write are file operations
// package shellparse reports for every find.
func findCmd(s *spec, r *result, i int) {
	for i < len(r.argv) && r.argv[i].Static {
		v := r.argv[i].Value
		if v == "-H" || v == "-L" || v == "-P" || strings.HasPrefix(v, "-O") {
			i++
		} else if v == "-D" {
			i += 2
		} else {
			break
		}
	}
	var starts []opnd
	for ; i < len(r.argv); i++ {
		a := r.argv[i]
		if a.Static && (strings.HasPrefix(a.Value, "-") || a.Value == "(" || a.Value == "!") {
			break
		}
		starts = append(starts, opnd{a, i})
	}
	if len(starts) == 0 {
		starts = []opnd{{Arg{Value: ".", Static: true}, 0}}
	}
	deletes := false
	for ; i < len(r.argv); i++ {
		a := r.argv[i]
		if !a.Static {
			r.unknown(i, "", "find: a word known only at run time stands where a test or an action such as -delete or -exec may")
			continue
		}
		v := a.Value
		n, ok := findPrimaries[v]
		if !ok && strings.HasPrefix(v, "-newer") && len(v) == len("-newerXY") {
			n, ok = 1, true
		}
		switch {
		case !ok:
			r.unknown(i, v, fmt.Sprintf("find %s is not a primary guardrun knows", v))
			i = len(r.argv)
			continue
		case n < 0:
			// -exec CMD ... ; or {} +: the command is judged on its own.
			j := i + 1
			for ; j < len(r.argv); j++ {
				t := r.argv[j]
				if t.Static && (t.Value == ";" || t.Value == "+" && j > i+1 && r.argv[j-1].Value == "{}") {
					break
				}
			}
			i = j
			continue
		case v == "-delete":
			deletes = true
		case v == "-files0-from":
			if i+1 < len(r.argv) {
				r.file(Read, opnd{r.argv[i+1], i + 1}, v, "reads the starting points from the file")
			}
		}
		i += n
	}
	for _, st := range starts {
		r.file(Read, st, "", "lists the files under this path")
		if deletes {
			r.file(Delete, st, "-delete", "find -delete removes what it finds under this path")
		}
	}
}
