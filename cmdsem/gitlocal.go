package cmdsem

// The git subcommands the default pre-approves beyond showing: git
// branch only lists (creating, deleting, renaming and copying branches
// and their upstream settings ask), git add stages the files it is given
// (each read, so a denied one is refused), git remote only lists, git mv
// moves files as mv does.

func gitBranchSpec() *spec {
	changes := func(why string) act { return act{Unknown, why} }
	return &spec{
		Options: Options{Short: "vqt::u:radDmMcClfi", AllShort: true, Abbrev: true, StrictLong: true, Permute: true,
			Long: "verbose quiet track[=] no-track set-upstream-to= unset-upstream color[=] no-color remotes contains= no-contains= abbrev[=] no-abbrev all delete move copy list show-current create-reflog no-create-reflog edit-description force merged= no-merged= column[=] no-column sort= points-at= ignore-case no-ignore-case recurse-submodules format= omit-empty help"},
		do: acts("d", "delete", changes("deletes branches"), "D", "", changes("deletes branches"),
			"m", "move", changes("renames branches"), "M", "", changes("renames branches"),
			"c", "copy", changes("copies branches"), "C", "", changes("copies branches"),
			"", "edit-description", ex("starts an editor"),
			"u", "set-upstream-to", changes("changes the branch's upstream in .git/config"),
			"", "unset-upstream", changes("changes the branch's upstream in .git/config"),
			"t", "track", changes("changes the branch's upstream in .git/config"),
			"f", "force", changes("forces a branch to be created, moved or deleted"),
			"", "create-reflog", changes("creates a branch's reflog"),
			"", "recurse-submodules", changes("creates branches in the submodules")),
		operands: func(r *result, ops []opnd) {
			// Operands are patterns in list mode, which these imply;
			// otherwise the first names a branch to create (git
			// branch -v NAME creates NAME: -v only lists when
			// nothing else is asked for).
			if len(ops) == 0 || r.hasAny("l", "list", "contains", "no-contains", "merged", "no-merged", "points-at",
				"d", "delete", "D", "m", "move", "M", "c", "copy", "C", "edit-description", "u", "set-upstream-to", "unset-upstream") {
				return
			}
			r.unknown(ops[0].idx, "", "git branch NAME creates a branch")
		},
	}
}

func gitAddSpec() *spec {
	editor := ex("starts an editor")
	return &spec{
		Options: Options{Short: "nvipefuNA", AllShort: true, Abbrev: true, StrictLong: true, Permute: true,
			Long: "dry-run verbose interactive patch edit force update renormalize intent-to-add all no-all ignore-removal no-ignore-removal refresh ignore-errors ignore-missing sparse chmod= pathspec-from-file= pathspec-file-nul no-warn-embedded-repo help"},
		do: acts("i", "interactive", editor, "p", "patch", editor, "e", "edit", editor,
			"", "pathspec-from-file", rd("reads paths from the file")),
		operands: func(r *result, ops []opnd) {
			for _, o := range ops {
				if o.Static && o.Value != "" && o.Value[0] == ':' {
					continue // a pathspec with magic (:/, :(exclude)...)
				}
				r.file(Read, o, "", "stages the file's contents")
			}
		},
	}
}

func gitRemoteSpec() *spec {
	changes := &spec{custom: func(s *spec, r *result, i int) {
		r.unknown(i-1, r.argv[i-1].Value, "changes the repository's remotes in .git/config")
	}}
	return &spec{
		Options: Options{Short: "v", AllShort: true, Long: "verbose help", StrictLong: true},
		anySub:  true,
		sub: map[string]*spec{
			"get-url": {Options: Options{Long: "push all", StrictLong: true, Permute: true}},
			"show": {Options: Options{Short: "n", AllShort: true, StrictLong: true, Permute: true},
				operands: func(r *result, ops []opnd) {
					if !r.hasAny("n") && len(ops) > 0 {
						r.unknown(ops[0].idx, "", "git remote show asks the remote (-n does not)")
					}
				}},
			"add": changes, "rename": changes, "remove": changes, "rm": changes, "set-head": changes,
			"prune": changes, "update": changes, "set-branches": changes, "set-url": changes,
		},
	}
}

func gitMvSpec() *spec {
	return &spec{Options: Options{Short: "vnfk", AllShort: true, Abbrev: true, StrictLong: true, Permute: true,
		Long: "verbose dry-run force sparse help"},
		operands: destOps("moves", true), writesOperands: true}
}
