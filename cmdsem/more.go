package cmdsem

import "strings"

// The "harmless" programs of the table that write or run something
// through an option or an operand (GTFOBins-style trampolines) share
// these.

// inOut: uniq IN OUT, xxd IN OUT: the second operand is written. A word
// that may stand for several (a glob, "$@") or none in the first place
// leaves unknown which word is the second: uniq * writes the second file
// the glob finds.
func inOut(verb string) func(r *result, ops []opnd) {
	return func(r *result, ops []opnd) {
		if len(ops) > 0 && !ops[0].Static && ops[0].Glob {
			r.add(Effect{Kind: Write, Word: ops[0].idx, Path: "(run-time value)", Dynamic: true,
				Why: "writes its second operand, and the first may stand for several words (a glob, \"$@\"), so which word that is is not known until run time"})
			return
		}
		if len(ops) > 0 && ops[0].Value != "-" {
			r.file(Read, ops[0], "", "reads the file")
		}
		if len(ops) > 1 && (ops[1].Value != "-" || !ops[1].Static) {
			r.file(Write, ops[1], "", verb)
		}
	}
}

// lessLong are less 590's long options.
const lessLong = "search-skip-screen SEARCH-SKIP-SCREEN buffers= auto-buffers clear-screen dumb color= quit-at-eof QUIT-AT-EOF force quit-if-one-screen hilite-search HILITE-SEARCH max-back-scroll= ignore-case IGNORE-CASE jump-target= status-column lesskey-file= quit-on-intr no-lessopen long-prompt LONG-PROMPT line-numbers LINE-NUMBERS log-file= LOG-FILE= pattern= prompt= quiet QUIET silent SILENT raw-control-chars RAW-CONTROL-CHARS squeeze-blank-lines chop-long-lines tag= tag-file= underline-special UNDERLINE-SPECIAL version hilite-unread HILITE-UNREAD tabs= no-init max-forw-scroll= window= quotes= tilde shift= file-size follow-name incsearch line-num-width= mouse no-keypad no-histdups rscroll= save-marks status-col-width= use-backslash use-color wheel-lines= help"

// newLessSpec is less's (and more's) spec. less is a pager: on a
// terminal it takes commands from the keyboard (! runs a shell command,
// | pipes to one, v starts an editor, s saves to a file), so it is
// pre-approved only where its output goes to a pipe or a file, where it
// copies its input like cat. Its options are read strictly: -k and
// --lesskey-file read key bindings that can run commands, -t and -T look
// tags up (which LESSGLOBALTAGS can make a program do), -o and -O write a
// log, and +cmd runs less commands at start.
func newLessSpec() *spec {
	lessOpts := &spec{Options: Options{Short: "aAb:BcdD:eEfFgGh:iIj:Jk:KLmMnNo:O:p:P:qQrRsSt:T:uUVwWx:Xy:z:\"~#:?", AllShort: true, StrictLong: true, Abbrev: true, Permute: true,
		Long: lessLong},
		do: acts("o", "log-file", wr("copies its input to the file"),
			"O", "LOG-FILE", wr("copies its input to the file"),
			"k", "lesskey-file", act{Unknown, "reads key bindings, which can run commands"},
			"t", "tag", act{Unknown, "looks a tag up, which can run a program (LESSGLOBALTAGS)"},
			"T", "tag-file", act{Unknown, "looks tags up, which can run a program (LESSGLOBALTAGS)"}),
		operands: readOps}
	lessOpts.init()
	return &spec{
		do: lessOpts.do, Options: Options{Short: lessOpts.Short, Long: lessOpts.Long}, // for the catalog
		custom: func(s *spec, r *result, i int) {
			for j := i; j < len(r.argv); j++ {
				if strings.HasPrefix(r.argv[j].Value, "+") {
					r.exec(j, r.argv[j].Value, "runs less commands at start, which can run shell commands (!)")
				}
			}
			lessOpts.run(r, i)
			r.add(Effect{Kind: Exec, Word: 0, Terminal: true,
				Why: "less is a pager, and its output here may be a terminal, where it takes commands from the keyboard (! runs shell commands)"})
		},
		env: []string{"LESSKEY", "LESSKEYIN", "LESSSECURE", "LESSEDIT", "LESSHISTFILE", "LESSGLOBALTAGS", "LESSMETACHARS", "LESSMETAESCAPE"}}
}
