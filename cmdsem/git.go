package cmdsem

// git: the options before the subcommand, then the subcommand's own.
// Read-only subcommands list all their options (an unknown one asks);
// other subcommands list the options that write or run programs.

const gitDiffLog = "abbrev[=] abbrev-commit all all-match alternate-refs ancestry-path[=] anchored= author= author-date-order basic-regexp binary bisect boundary branches[=] break-rewrites cc check cherry cherry-mark cherry-pick children clear-decorations color[=] color-moved[=] color-moved-ws[=] color-words[=] combined-all-paths committer= compact-summary cumulative date[=] date-order decorate[=] decorate-refs[=] decorate-refs-exclude dense diff-algorithm= diff-filter[=] diff-merges[=] dirstat[=] dirstat-by-file[=] do-walk dst-prefix= encoding= exclude= exclude-first-parent-only exclude-hidden= exit-code expand-tabs[=] ext-diff find-copies find-copies-harder find-object= find-renames first-parent follow format[=] full-diff full-history full-index function-context glob[=] graph grep[=] grep-reflog[=] histogram ignore-all-space ignore-blank-lines ignore-cr-at-eol ignore-matching-lines= ignore-missing ignore-space-at-eol ignore-space-change ignore-submodules[=] indent-heuristic indexed-objects inter-hunk-context[=] invert-grep irreversible-delete ita-invisible-in-index ita-visible-in-index left-only left-right line-prefix= log-size max-parents= merge merges min-parents= minimal name-only name-status no-abbrev no-abbrev-commit no-color no-color-moved no-color-moved-ws no-compact-summary no-decorate no-exit-code no-expand-tabs no-ext-diff no-find-copies-harder no-follow no-full-index no-function-context no-ignore-matching-lines no-indent-heuristic no-index no-max-parents no-merges no-min-parents no-minimal no-notes no-patch no-prefix no-quiet no-relative no-rename-empty no-renames no-text no-textconv no-use-mailmap no-walk[=] not notes[=] numstat oneline output= output-indicator-context= output-indicator-new= output-indicator-old= parents patch patch-with-raw patch-with-stat patience pickaxe-all pickaxe-regex pretty[=] quiet raw reflog relative[=] relative-date remotes[=] remove-empty rename-empty reverse right-only rotate-to= shortstat show-linear-break[=] show-notes[=] show-pulls show-signature simplify-by-decoration simplify-merges since= since-as-filter= single-worktree skip= skip-to= source sparse src-prefix= stat[=] stat-count= stat-graph-width= stat-name-width= stat-width= stdin strategy submodule[=] summary tags[=] text textconv topo-order unfold unified= until= use-mailmap walk-reflogs word-diff[=] word-diff-regex[=] ws-error-highlight= max-count= after= before= min-age= max-age= author-date-order show-origin no-graph line-porcelain no-show-signature raw merge-base cached staged"

func gitDiffLogSpec() *spec {
	return &spec{
		Options: Options{Short: "puszRB::M::C::l:O:S:G:abwWU:X::n:L:iEFPgcmtrDqNhv0123456789", AllShort: true,
			Long: gitDiffLog + " help", StrictLong: true, Permute: true},
		do: acts("", "output", wr("writes the diff or log to the file instead of printing it"),
			"O", "", rd("reads the order of files from the file"),
			"", "ext-diff", ex("runs the external diff program named in git's configuration")),
		operands: func(r *result, ops []opnd) {
			// With --no-index, git diff compares any two files.
			if r.hasAny("no-index") {
				for _, o := range ops {
					r.file(Read, o, "", "compares the file")
				}
			}
		},
	}
}

func newGitSpec() *spec {
	rw := func(short string, do map[string]act) *spec {
		return &spec{Options: Options{Short: short, Permute: true, Abbrev: true}, do: do}
	}
	ro := func(short, long string, do map[string]act) *spec {
		return &spec{Options: Options{Short: short, AllShort: true, Long: long + " help", Abbrev: true, StrictLong: true, Permute: true}, do: do}
	}
	dl := gitDiffLogSpec()
	fetchLike := rw("u:", acts("", "upload-pack", ex("runs the program on the remote side"),
		"u", "", ex("runs the program on the remote side"),
		"", "receive-pack", ex("runs the program on the remote side"),
		"", "exec", ex("runs the program on the remote side"),
		"", "template", rd("copies templates (hooks) from the directory")))
	editor := ex("starts an editor")
	return &spec{
		Options: Options{Short: "C:c:pPhv", AllShort: true,
			Long:       "version help exec-path[=] html-path man-path info-path paginate no-pager no-replace-objects bare git-dir= work-tree= namespace= super-prefix= config-env= literal-pathspecs glob-pathspecs noglob-pathspecs icase-pathspecs no-optional-locks list-cmds= attr-source= no-advice",
			StrictLong: true},
		do: acts("C", "", act{chdir, ""},
			"c", "", ex("sets configuration for this run, which can name programs git runs (core.pager, core.sshCommand, aliases, diff drivers)"),
			"", "config-env", ex("sets configuration for this run, which can name programs git runs"),
			"", "exec-path", ex("makes git run its subcommands from another directory"),
			"", "git-dir", ex("uses another repository, whose configuration can name programs git runs"),
			"", "work-tree", act{Unknown, "points git at another working tree"}),
		env:    []string{"GIT_*", "EMAIL"},
		anySub: true,
		sub: map[string]*spec{
			"diff": dl, "log": dl, "show": dl, "whatchanged": dl,
			"status": ro("sbvu::z", "ahead-behind branch column[=] find-renames[=] ignore-submodules[=] ignored[=] long no-ahead-behind no-branch no-column no-ignore-submodules no-ignored no-long no-null no-porcelain no-renames no-short no-show-stash no-untracked-files no-verbose null porcelain[=] renames short show-stash untracked-files[=] verbose", nil),
			"blame": ro("bcflL:nps:S:tweM::C::", "abbrev[=] color-by-age color-lines contents= date encoding= first-parent ignore-rev= ignore-revs-file= incremental line-porcelain minimal no-abbrev porcelain progress no-progress reverse root score-debug show-email show-name show-number show-stats",
				acts("", "contents", rd("reads the file as the working copy"), "", "ignore-revs-file", rd("reads revisions to skip"), "S", "", rd("reads revisions from the file"))),
			"grep": ro("aiIvwEGFPnhHclLzoO::f:e:A:B:C:Wpqr0123456789m:", "after-context= all-match and basic-regexp before-context= break cached color[=] column context= count exclude-standard extended-regexp file= files-with-matches files-without-match fixed-strings full-name function-context heading ignore-case invert-match line-number max-count= max-depth= name-only no-index no-exclude-standard null only-matching open-files-in-pager[=] or not perl-regexp quiet recurse-submodules recursive show-function text textconv no-textconv threads= untracked word-regexp no-color",
				acts("O", "open-files-in-pager", ex("opens the matching files in a pager program"), "f", "file", rd("reads patterns from the file"))),
			"shortlog": ro("nsecw::", "all author= branches[=] committer email format[=] group= max-count= merges no-merges numbered since= summary tags[=] until= remotes[=] reverse", nil),
			"describe": ro("", "abbrev[=] all always broken candidates= contains debug dirty[=] exact-match exclude= first-parent long match= tags", nil),
			"ls-files": ro("cdmoiskuvftzx:X:", "abbrev[=] cached debug deduplicate deleted directory empty-directory eol error-unmatch exclude= exclude-from= exclude-per-directory= exclude-standard format= full-name ignored killed modified no-empty-directory others recurse-submodules resolve-undo sparse stage unmerged with-tree=",
				acts("X", "exclude-from", rd("reads exclusion patterns from the file"))),
			"ls-tree":   ro("dlrtz", "abbrev[=] format= full-name full-tree long name-only name-status object-only", nil),
			"cat-file":  ro("tspeP", "allow-unknown-type batch[=] batch-all-objects batch-check[=] batch-command[=] buffer filters follow-symlinks mailmap path= textconv unordered use-mailmap", acts("", "filters", ex("runs the repository's clean/smudge filter programs"), "", "textconv", ex("runs the repository's textconv programs"))),
			"rev-parse": &spec{Options: Options{Permute: true}},
			"rev-list":  &spec{Options: Options{Permute: true}},
			"show-ref":  ro("dsq", "abbrev[=] dereference exclude-existing[=] hash[=] head heads quiet tags verify", nil),
			"version":   ro("", "build-options", nil),
			"branch":    gitBranchSpec(),
			"tag":       rw("eF:m:u:", acts("e", "edit", editor, "F", "file", rd("reads the message from the file"))),
			"commit": rw("eF:t:m:C:c:pi", acts("e", "edit", editor, "F", "file", rd("reads the message from the file"), "t", "template", rd("reads the message template"),
				"", "interactive", editor, "", "patch", editor)),
			"add":          gitAddSpec(),
			"format-patch": rw("o:", acts("o", "output-directory", wr("writes the patches into the directory"))),
			"archive":      rw("o:", acts("o", "output", wr("writes the archive to the file"), "", "exec", ex("runs the program on the remote side"), "", "remote", ex("runs git-upload-archive on a remote"))),
			"fetch":        fetchLike, "pull": fetchLike, "push": fetchLike, "clone": fetchLike, "ls-remote": fetchLike, "init": fetchLike,
			"config":        rw("ef:", acts("e", "edit", editor, "f", "file", wr("reads or writes the configuration file"), "", "blob", rd("reads configuration from a blob"))),
			"difftool":      rw("x:t:", acts("x", "extcmd", ex("runs the program as the diff tool"), "t", "tool", ex("runs the tool"))),
			"mergetool":     rw("t:", acts("t", "tool", ex("runs the tool"))),
			"rebase":        rw("x:i", acts("x", "exec", ex("runs the command after each commit"), "i", "interactive", editor)),
			"bisect":        rw("", nil),
			"submodule":     rw("", nil),
			"filter-branch": rw("", nil),
			"send-email":    rw("", nil),
			"instaweb":      rw("", nil),
			"web--browse":   rw("", nil),
			"help":          rw("w", acts("w", "web", ex("starts a web browser"))),
			"checkout":      rw("", nil), "switch": rw("", nil), "restore": rw("", nil), "reset": rw("", nil), "stash": rw("", nil),
			"merge":       rw("eF:m:", acts("e", "edit", editor, "F", "file", rd("reads the message from the file"))),
			"cherry-pick": rw("e", acts("e", "edit", editor)), "revert": rw("e", acts("e", "edit", editor)),
			"rm": rw("", nil), "mv": gitMvSpec(), "clean": rw("", nil), "gc": rw("", nil), "apply": rw("", nil), "am": rw("", nil),
			"remote": gitRemoteSpec(), "worktree": rw("", nil), "notes": rw("eF:m:", acts("e", "edit", editor, "F", "file", rd("reads the note from the file"))),
			"reflog": rw("", nil), "fsck": rw("", nil), "bundle": rw("", nil), "sparse-checkout": rw("", nil), "maintenance": rw("", nil),
		},
	}
}
