package cmdsem

import "strings"

// moreCommands adds "harmless" programs that write or run something
// through an option or an operand (GTFOBins-style trampolines).
func moreCommands() {
	// uniq IN OUT, xxd IN OUT: the second operand is written.
	inOut := func(verb string) func(r *result, ops []opnd) {
		return func(r *result, ops []opnd) {
			if len(ops) > 0 && ops[0].Value != "-" {
				r.file(Read, ops[0], "", "reads the file")
			}
			if len(ops) > 1 && ops[1].Value != "-" {
				r.file(Write, ops[1], "", verb)
			}
		}
	}
	table["uniq"] = gnu(&spec{short: "cdDf:is:uw:z", allShort: true,
		long:     "all-repeated[=] check-chars= count group[=] ignore-case repeated skip-chars= skip-fields= unique zero-terminated",
		operands: inOut("writes its output to the second operand")})
	table["shuf"] = gnu(&spec{short: "ei:n:o:rz", allShort: true,
		long: "echo head-count= input-range= output= random-source= repeat zero-terminated",
		do:   acts("o", "output", wr("writes its output to the file"), "", "random-source", rd("reads random bytes from the file")),
		operands: func(r *result, ops []opnd) {
			if !r.hasAny("e", "echo", "i", "input-range") {
				readOps(r, ops)
			}
		}})
	table["split"] = gnu(&spec{short: "a:b:C:del:n:t:x", allShort: true,
		long: "additional-suffix= bytes= elide-empty-files filter= hex-suffixes[=] line-bytes= lines= number= numeric-suffixes[=] separator= suffix-length= unbuffered verbose",
		do:   acts("", "filter", ex("pipes each piece through a shell command")),
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
		}})
	table["xxd"] = &spec{short: "abCEeg:hic:l:n:o:prs:uvRd", permute: true,
		long:     "help version",
		operands: inOut("writes its output to the second operand")}
	table["tree"] = &spec{short: "adfxL:P:I:o:RnNQqpugsDhFvrtcUSXJCA", permute: true,
		long: "help version noreport charset= filelimit= timefmt= du si prune dirsfirst filesfirst sort= gitignore info fromfile",
		do:   acts("o", "", wr("writes the listing to the file"))}
	table["man"] = &spec{short: "C:dDwWkKfl:LmMpPr:S:s:e:E:ZTHXRgaIiutBcn", permute: true, abbrev: true,
		long: "all apropos ascii catman config-file= debug default ditroff encoding= extension= global-apropos gxditview[=] html[=] ignore-case local-file locale= location location-cat manpath= match-case names-only nh nj no-hyphenation no-justification no-subpages pager= path preprocessor= prompt= recode= regex sections= systems= troff troff-device[=] update usage warnings[=] whatis where where-cat wildcard help version",
		do: acts("P", "pager", ex("runs the program as the pager"),
			"H", "html", ex("runs a web browser"),
			"", "gxditview", ex("runs a viewer program"),
			"p", "preprocessor", act{Unknown, "chooses the preprocessors man runs"},
			"C", "config-file", act{Unknown, "reads configuration that can name programs"},
			"l", "local-file", act{Unknown, "formats a local file, which can run programs through troff requests"}),
		env: []string{"MANPAGER", "MANOPT", "MANROFFOPT", "GROFF_*", "BROWSER"}}
	lessOpts := &spec{short: "aAbBcCdeEfFgGiIjJkKLmMnNo:O:p:P:qQrRsSt:T:uUVwWx:X~y:z:#:", permute: true, abbrev: true,
		long: "log-file= LOG-FILE= lesskey-file= tag= tag-file= pattern= prompt= buffers= shift= tabs= window= no-lessopen quit-at-eof quiet silent chop-long-lines raw-control-chars line-numbers ignore-case help version",
		do: acts("o", "log-file", wr("copies its input to the file"),
			"O", "LOG-FILE", wr("copies its input to the file"),
			"k", "lesskey-file", act{Unknown, "reads key bindings, which can run commands"}),
		operands: readOps}
	lessOpts.init()
	table["less"] = &spec{
		do: lessOpts.do, short: lessOpts.short, long: lessOpts.long, // for the catalog
		custom: func(s *spec, r *result, i int) {
			for j := i; j < len(r.argv); j++ {
				if strings.HasPrefix(r.argv[j].Value, "+") {
					r.exec(j, r.argv[j].Value, "runs less commands at start, which can run shell commands (!)")
				}
			}
			lessOpts.run(r, i)
		},
		env: []string{"LESSKEY", "LESSKEYIN", "LESSSECURE", "LESSEDIT", "LESSHISTFILE"}}
	table["more"] = table["less"]
	table["patch"] = gnu(&spec{short: "bB:cd:D:eEfF:g:i:lnNo:p:r:RstTuvVY:z:Z", allShort: true,
		long: "backup backup-if-mismatch basename-prefix= batch binary context directory= dry-run ed force forward fuzz= get= ifdef= ignore-whitespace input= merge no-backup-if-mismatch normal output= posix prefix= quiet quoting-style= read-only= reject-file= reject-format= remove-empty-files reverse set-time set-utc silent strip= suffix= unified verbose version-control=",
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
		}})
	table["dd"] = &spec{custom: func(s *spec, r *result, i int) {
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
	table["file"] = &spec{short: "bcCdEhiklLNnprsSvzZ0e:f:F:m:P:", permute: true, abbrev: true,
		long: "apple brief checking-printout compile debug dereference exclude= exclude-quiet= extension files-from= keep-going list magic-file= mime mime-encoding mime-type no-buffer no-dereference no-pad no-sandbox parameter= preserve-date print0 raw separator= special-files uncompress uncompress-noreport help version",
		do: acts("C", "compile", act{Unknown, "writes a compiled magic file into the working directory"},
			"f", "files-from", rd("reads the names of the files"), "m", "magic-file", rd("reads the magic file"))}
	for _, s := range []string{"uniq", "shuf", "split", "xxd", "tree", "man", "less", "patch", "dd", "file"} {
		table[s].init()
	}
}
