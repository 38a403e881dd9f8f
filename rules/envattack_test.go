package rules

import (
	"os"
	"path/filepath"
	"testing"
)

// envAttacks are scripts tried against the embedded default config that
// change the locale bash and programs read bytes in (a charset such as
// BIG5 or GBK where 0x5c or 0x60 can end a character), the catalogs
// $"..." strings are translated from, and near-variants of the comment,
// here-document, env -C and protected-name rules: other ways to join
// lines, quoted and <<- delimiters, env --chdir and -S, and names that
// differ from .git, .ssh or .env by a Unicode letter that folds to an
// ASCII one; and the ways a nested bash starts at shell level 1.
var envAttacks = []struct {
	script string
	want   Verdict
}{
	// A locale whose charset reads ASCII bytes differently asks, in
	// every way it can reach bash or a program.
	{"LC_ALL=zh_TW.BIG5 bash -c 'echo hi'", Ask},
	{"LC_CTYPE=zh_CN.GBK bash -c 'echo hi'", Ask},
	{"LANG=ja_JP.SJIS bash -c 'echo hi'", Ask},
	{"LC_ALL=zh_CN.GB18030 ls", Ask},
	{"LC_ALL=zh_TW.Big5@x ls", Ask},
	{"LC_ALL=zh_TW.BIG5-HKSCS ls", Ask},
	{"LC_ALL=ko_KR.JOHAB ls", Ask},
	{"LANG=zh_TW ls", Ask},
	{"LC_ALL=zh_TW.euc.BIG5 ls", Ask},
	{"LC_ALL=zh_TW.ISO-8859-1+BIG5 ls", Ask},
	{"LC_ALL=zh_TW.UTF-8.BIG5 ls", Ask},
	{"LC_ALL=C.ANSI_X3.4-1968 ls", Allow},
	{"LANG=en_US ls", Ask},
	{"LC_ALL=zh_TW@x.UTF-8 ls", Ask},
	{"LC_ALL=zh_TW@.UTF-8; echo hi", Ask},
	{"LANG=zh_TW@euro.utf8 bash -c ls", Ask},
	{"LC_ALL=zh_TW.UTF-8@x ls", Allow},
	{"LC_ALL=_TW.UTF-8 ls", Ask},
	{"LC_ALL=.UTF-8 ls", Ask},
	{"LC_ALL=zh_TW.UTF-8@x.BIG5 ls", Allow},
	{"LC_ALL=zh_TW.BIG5@x.UTF-8 ls", Ask},
	{"LANG=chinese ls", Ask},
	{"LANG=japanese.sjis ls", Ask},
	{"LANG=ja_JP.ujis ls", Ask},
	{"LANGUAGE=zh_TW:zh bash -c ls", Allow},
	{"LC_MESSAGES=zh_TW.BIG5 bash -c ls", Allow},
	{"LC_ALL[0]=zh_TW.BIG5; echo hi", Ask},
	{"select LC_ALL in zh_TW.BIG5; do echo hi; done", Ask},
	{"getopts a LC_ALL; echo hi", Ask},
	{"mapfile LC_ALL; echo hi", Ask},
	{"wait -p LC_ALL; echo hi", Ask},
	{"readonly LC_ALL=zh_TW.BIG5; echo hi", Ask},
	{"x=LC_ALL; declare \"$x=zh_TW.BIG5\"; echo hi", Ask},
	{"read -rLC_ALL; echo hi", Ask},
	{"printf -vLC_ALL x; echo hi", Ask},
	{"LC_ALL=$L ls", Ask},
	{"LC_ALL=zh_TW.BIG5\necho hi", Ask},
	{"LC_ALL=zh_TW.BIG5; echo hi", Ask},
	{"env LC_ALL=zh_TW.BIG5 bash -c 'echo hi'", Ask},
	{"env -i LC_CTYPE=zh_TW.BIG5 ls", Ask},
	{"env -S 'LC_ALL=zh_TW.BIG5 bash -c ls'", Ask},
	{"export LC_ALL=zh_TW.BIG5", Ask},
	{"declare -x LC_CTYPE=zh_TW.BIG5", Ask},
	{"local LANG=zh_TW.BIG5", Ask},
	{"declare -n r=LC_ALL; r=zh_TW.BIG5; echo hi", Ask},
	{"read LC_ALL; echo hi", Ask},
	{"printf -v LC_ALL %s zh_TW.BIG5; echo hi", Ask},
	{"for LC_ALL in zh_TW.BIG5; do echo hi; done", Ask},
	{": ${LC_ALL:=zh_TW.BIG5}; echo hi", Ask},
	{"LC_ALL+=.BIG5 ls", Ask},
	{"LOCPATH=. ls", Ask},
	{"LOCPATH=./loc LC_ALL=en_US.UTF-8 bash -c ls", Ask},
	{"TEXTDOMAIN=x echo $\"hello\"", Ask},
	{"TEXTDOMAINDIR=. bash -c 'echo $\"hello\"'", Ask},
	// A bash started at shell level 1 runs ~/.bashrc first when its
	// input is a socket or SSH_CLIENT is set.
	{"SHLVL=0 bash -c ls", Ask},
	{"export SHLVL=1000; bash -c ls", Ask},
	{"unset SHLVL; bash -c ls", Ask},
	{"SSH_CLIENT=1 bash -c ls", Ask},
	{"SSH2_CLIENT=1 bash -c ls", Ask},
	{"env -i bash -c ls", Ask},
	{"env - bash -c ls", Ask},
	{"env --ignore-environment /bin/bash -c ls", Ask},
	{"env -iu X bash -c ls", Ask},
	{"env -u SHLVL bash -c ls", Ask},
	{"env -S '-i bash -c ls'", Ask},
	{"env -i sh -c ls", Ask},
	{"env -i $SH -c ls", Ask},
	{"exec -c bash -c ls", Ask},
	{"nice env -i bash -c ls", Ask},
	// A bash started without SHLVL through wrappers under env -i,
	// env -u SHLVL or exec -c.
	{"env -i env bash -c ls", Ask},
	{"env -i /usr/bin/env bash -c ls", Ask},
	{"env -i -- env -- bash -c ls", Ask},
	{"env -i nice bash -c ls", Ask},
	{"env -i timeout 5 bash -c ls", Ask},
	{"env -i nohup bash -c ls", Ask},
	{"env -i stdbuf -o0 bash -c ls", Ask},
	{"env -i setsid bash -c ls", Ask},
	{"env -i xargs bash -c ls", Ask},
	{"env -i find . -exec bash -c ls \\;", Ask},
	{"env -u SHLVL env bash -c ls", Ask},
	{"exec -c env bash -c ls", Ask},
	{"exec -c nice bash -c ls", Ask},
	{"env -i nice ls", Allow},
	{"env -i git status", Allow},
	{"env -u FOO nice bash -c ls", Allow},
	{"nice bash -c ls", Allow},
	{"env -i ls", Allow},
	{"env -u FOO bash -c ls", Allow},
	{"exec -c ls", Allow},
	{"bash -c ls", Allow},
	{"READNULLCMD=./x; < y", Ask},
	{"NULLCMD=./x; > y", Ask},
	{"ZDOTDIR=. zsh -c ls", Ask},
	{"zsh -m -c \"STTY=';touch M' /bin/true\"", Ask},
	{"STTY='; touch M' ls", Ask},
	{"export STTY=x; zsh -m -c ls", Ask},
	{"zsh -c 'setopt monitor; ls'", Ask},
	{"FPATH=. zsh -c ls", Ask},
	{"PROMPT=x zsh -c ls", Allow},
	{"zsh -c 'module_path=(.); echo $commands[ls]'", Ask},
	{"zsh -c 'MODULE_PATH=.; echo $commands[ls]'", Ask},
	{"module_path+=(.); echo", Ask},
	{"zsh -c 'echo $commands[ls]'", Allow},
	// zsh glob qualifiers and the (e) flag run code.
	{"zsh -c \"echo *(e:'touch M':)\"", Ask},
	{"zsh -c 'echo *(+f)'", Ask},
	{"zsh -c 'echo *.go(.)'", Ask},
	{"zsh -c 'echo (e:x:)'", Ask},
	{"zsh -c 'echo ${(e)x}'", Ask},
	{"zsh -c 'echo \"${(Le)x}\"'", Ask},
	{"zsh -c 'echo ${(s:,:)x}'", Allow},
	{"zsh -c 'echo ${~x}'", Ask},
	{"zsh -c 'echo $~x'", Ask},
	{"zsh -c 'echo ${~~x}'", Allow},
	{"zsh -c 'echo ${(P)x}'", Allow},
	{"zsh -o globsubst -c 'echo $x'", Ask},
	{"zsh +o noglobsubst -c 'echo $x'", Ask},
	{"zsh -o GLOB_SUBST -c 'echo $x'", Ask},
	{"zsh --globsubst -c 'echo $x'", Ask},
	{"zsh --emulate sh -c 'echo $x'", Ask},
	{"zsh -c 'options[globsubst]=on; echo $x'", Ask},
	{"zsh -c 'setopt globsubst; echo $x'", Ask},
	{"zsh -c 'emulate sh; echo $x'", Ask},
	{"zsh -f -c 'echo $x'", Allow},
	{"zsh -c 'echo $x[(e)1]'", Allow},
	{"bash -c 'echo *(x)'", Allow},
	// Names that keep bytes below 0x80 ASCII are fine.
	{"LC_ALL=C ls", Allow},
	{"LC_ALL=POSIX ls", Allow},
	{"LC_ALL=C.UTF-8 ls", Allow},
	{"LC_ALL=C.utf8 ls", Allow},
	{"LANG=en_US.UTF-8 ls", Allow},
	{"LC_ALL=de_DE.ISO-8859-1 ls", Allow},
	{"LC_ALL=ja_JP.eucJP ls", Allow},
	{"LC_ALL=ru_RU.KOI8-R ls", Allow},
	{"LC_ALL= ls", Allow},
	{"echo $\"hello\"", Allow},
	// Lines joined other ways than a comment's backslash.
	{"ls # \\\ntouch M", Ask},
	{"ls #x\\\ntouch M", Ask},
	{"ls ; # \\\ntouch M", Ask},
	{"echo x && # \\\ntouch M", Ask},
	{"cat <<'EOF'\n\\\nEOF\ntouch M", Ask},
	{"cat <<-EOF\n\t\\\n\tEOF\ntouch M", Ask},
	{"cat <<\"E\\OF\"\n\\\nE\\OF\ntouch M", Ask},
	{"cat <<E\"O\"F\n\\\nEOF\ntouch M", Block},
	{"cat <<EOF\nEO\\\nF\nls", Block},
	{"cat <<EOF\n$(\\\n)\nEOF", Ask},
	// Here-document delimiters and bodies, comments and line joins read
	// as bash reads them (checked against bash: where bash runs touch M,
	// the row asks or blocks).
	{"cat <<EOF\nx\\\nEOF\ntouch M\nEOF", Allow},
	{"cat <<EOF\n`\\\n`\nEOF", Allow},
	{"cat <<EOF\nEOF \ntouch M\nEOF", Ask},
	{"cat <<-EOF\n  EOF\ntouch M\nEOF", Allow},
	{"cat <<-EOF\n\t \tEOF\ntouch M\nEOF", Allow},
	{"cat <<-EOF\n \tEOF\ntouch M\nEOF", Allow},
	{"cat <<E'O'F\n$(touch M)\nEOF", Ask},
	{"cat <<E\\OF\n$(touch M)\nEOF", Allow},
	{"cat <<\"\"\n$(touch M)\n\n", Allow},
	{"cat <<''\ntouch M\n\ntouch M", Ask},
	{"cat <<A <<B\nA\ntouch M\nB", Allow},
	{"cat <<A; cat <<B\nx\nA\ntouch M\nB", Allow},
	{"cat <<E\\\nOF\ntouch M\nEOF", Allow},
	{"cat <<E\\\nOF\ntouch M\nE\\\nOF", Block},
	{"cat <<\\EOF\n$(touch M)\nEOF", Allow},
	{"cat <<EOF\n\\$(touch M)\nEOF", Allow},
	{"cat <<EOF\n\\\\$(touch M)\nEOF", Ask},
	{"cat <<EOF\n$(cat <<EOF2\nEOF\n)\nEOF2\n)\nEOF", Allow},
	{"echo $(cat <<EOF\nEOF)\ntouch M\nEOF\n)", Ask},
	{"cat <<EOF\nEOF\\\ntouch M\nEOF", Ask},
	{"cat <<EOF\n${x#\\\n}\nEOF", Allow},
	{"cat <<EOF\n$\\\n(touch M)\nEOF", Ask},
	{"cat <<EOF\n$\\\n{x:-$(touch M)}\nEOF", Ask},
	{"cat <<'EOF'\n$\\\n(touch M)\nEOF", Ask},
	{"cat <<-\tEOF\n\tEOF\ntouch M", Ask},
	{"cat <<EOF\t\nx\nEOF", Allow},
	{"cat << EOF\nx\nEOF\ntouch M", Ask},
	{"cat <<EOF # \\\nx\nEOF\ntouch M", Block},
	{"cat <<EOF ; echo \\\nx\nEOF", Allow},
	{"cat <<EOF\nx\nEOF\\\n\ntouch M", Block},
	{"echo ok # x \\\\\ntouch M", Ask},
	{"echo ok #\\\\\\\ntouch M", Ask},
	{"echo \"#\" \\\ntouch M", Allow},
	{"echo a#b \\\ntouch M", Allow},
	{"echo ${x#\\\n} ; echo hi", Allow},
	{"echo '#' \\\necho M", Allow},
	{"case x in x) echo # \\\n;; esac; touch M", Ask},
	{"echo $((1#1)) # \\\ntouch M", Ask},
	{"[[ x ]] # \\\ntouch M", Block},
	{"echo x\\\n# \\\ntouch M", Ask},
	{"echo x \\\n# y\ntouch M", Ask},
	// env -C in every spelling moves the directory.
	{"env --chdir=/etc git diff --output=x", Block},
	{"env --chdir /etc git diff --output=x", Block},
	{"env --ch=/etc git diff --output=x", Block},
	{"env -C/etc git diff --output=x", Block},
	{"env -iC /etc git diff --output=x", Block},
	{"env -vC /etc git diff --output=x", Block},
	{"env -0C /etc git diff --output=x", Block},
	{"env -u X -C /etc git diff --output=x", Block},
	{"env -C sub -C /etc git diff --output=x", Block},
	{"env -S '-C /etc git diff --output=x'", Block},
	{"env -S'-C/etc git diff --output=x'", Block},
	{"env -S '--chdir=/etc git diff --output=x'", Block},
	{"env -S '-u X -C /etc' git diff --output=x", Block},
	{"env -S'-iC/etc git diff --output=x'", Block},
	{"env -C \"$HOME\" git diff --output=x", Ask},
	// Protected and denied names: case and the long s fold to them.
	{"cat ~/.ſsh/id_rsa", Block},
	{"cat ~/.SSH/id_rsa", Block},
	{"echo x > ~/.ſſh/config", Block},
	{"cat ~/.Aws/Credentials", Block},
	{"cat ~/.GNUPG/x", Block},
	{"cat .ENV", Block},
	{"echo x > .GIT/Config", Ask},
	{"echo x > sub/.GIT/hooks/x", Ask},
	{"echo x > .git/CONFIG.WORKTREE", Ask},
	{"echo x > .git/modules/a/CONFIG", Ask},
}

func TestEnvAttacks(t *testing.T) {
	home := "/home/u"
	ws := filepath.Join(t.TempDir(), "proj")
	if err := os.MkdirAll(filepath.Join(ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := LoadDefault(Env{Cwd: ws, Home: home, StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(c, home)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range envAttacks {
		if d := e.Script(r.script, ws); d.Decision != r.want {
			t.Errorf("%q: %s (%s), want %s", r.script, d.Decision, d.Reason, r.want)
		}
	}
}
