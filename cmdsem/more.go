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

// newLessSpec is less's (and more's) spec: its options, and commands
// given with +.
func newLessSpec() *spec {
	lessOpts := &spec{Options: Options{Short: "aAbBcCdeEfFgGiIjJkKLmMnNo:O:p:P:qQrRsSt:T:uUVwWx:X~y:z:#:", Permute: true, Abbrev: true,
		Long: "log-file= LOG-FILE= lesskey-file= tag= tag-file= pattern= prompt= buffers= shift= tabs= window= no-lessopen quit-at-eof quiet silent chop-long-lines raw-control-chars line-numbers ignore-case help version"},
		do: acts("o", "log-file", wr("copies its input to the file"),
			"O", "LOG-FILE", wr("copies its input to the file"),
			"k", "lesskey-file", act{Unknown, "reads key bindings, which can run commands"}),
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
		},
		env: []string{"LESSKEY", "LESSKEYIN", "LESSSECURE", "LESSEDIT", "LESSHISTFILE"}}
}
