package cmdsem

import (
	"strings"
	"testing"
)

func argv(words ...string) []Arg {
	out := make([]Arg, len(words))
	for i, w := range words {
		out[i] = Arg{Value: strings.ReplaceAll(w, "␣", " "), Static: true}
	}
	return out
}

// summary renders effects as "kind option path" lines for comparison.
func summary(es []Effect) string {
	var lines []string
	for _, e := range es {
		s := string(e.Kind)
		if e.Option != "" {
			s += " " + e.Option
		}
		if e.Path != "" {
			p := e.Path
			if e.Dir != "" {
				p = e.Dir + ":" + p
			}
			s += " " + p
		}
		lines = append(lines, s)
	}
	return strings.Join(lines, "; ")
}

func TestAnalyze(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		env  []string
		want string
	}{
		// getopt forms.
		{"sort -o out in", nil, "write -o out; read in"},
		{"sort -oout in", nil, "write -o out; read in"},
		{"sort -uo out in", nil, "write -o out; read in"},
		{"sort --output=out in", nil, "write --output out; read in"},
		{"sort --output out in", nil, "write --output out; read in"},
		{"sort --outp=out in", nil, "write --output out; read in"},
		{"sort in -o out", nil, "write -o out; read in"}, // GNU permutes
		{"sort -- -o out", nil, "read -o; read out"},
		{"sort -o -- in", nil, "write -o --; read in"}, // -- is -o's value
		{"sort -S1K --compress-program=sh x", nil, "exec --compress-program; read x"},
		{"sort --com=sh x", nil, "exec --compress-program; read x"},
		{"sort --s x", nil, "unknown --s; read x"}, // ambiguous
		{"sort --frob x", nil, "unknown --frob; read x"},
		{"sort -j x", nil, "unknown -j; read x"},
		{"sort -T /tmp x", nil, "write -T /tmp; read x"},
		{"sort x", []string{"TMPDIR"}, "env TMPDIR; read x"},
		// Positional writes.
		{"tee a b", nil, "write a; write b"},
		{"tee -a a -", nil, "write a"},
		{"cp a b", nil, "write b; read a"},
		{"cp a b dir/", nil, "write dir/; read a; read b"},
		{"cp -t dir a b", nil, "write -t dir; read a; read b"},
		{"cp -T a b", nil, "write b; read a"},
		{"mv a b", nil, "write b; delete a"},
		{"ln -s target", nil, "write target"},
		{"ln -s /etc/passwd link", nil, "write link"},
		{"install -d a b", nil, "write a; write b"},
		{"install -m 644 a /usr/bin/a", nil, "write /usr/bin/a; read a"},
		{"install --strip-program=sh -s a b", nil, "exec --strip-program; write b; read a"},
		{"touch -r ref a", nil, "read -r ref; write a"},
		{"mkdir -p a/b", nil, "write a/b"},
		{"chmod 755 a", nil, "write a"},
		{"chmod --reference=r a", nil, "read --reference r; write a"},
		// sed.
		{"sed -i s/a/b/ f", nil, "write -i f"},
		{"sed -i.bak -e s/a/b/ f", nil, "write -i f; write -i.bak f.bak"},
		{"sed -ni p f", nil, "write -i f"},
		{"sed s/a/b/w␣out f", nil, "write s///w out; read f"},
		{"sed -e 1e␣id f", nil, "exec e; read f"},
		{"sed s/x/id/e f", nil, "exec s///e; read f"},
		{"sed 1r␣/etc/passwd f", nil, "read r /etc/passwd; read f"},
		{"sed -n /re/w␣out f", nil, "write w out; read f"},
		{"sed --sandbox 1e␣id f", nil, "read f"},
		{"sed y/abc/xyz/ f", nil, "read f"},
		{"sed -f prog f", nil, "read -f prog; unknown -f; read f"},
		{"sed s/a;b/c/;p f", nil, "read f"},
		{"sed -n $p f", nil, "read f"},
		{"sed 1~2d;/x/,+3s/a/b/g f", nil, "read f"},
		{"sed s/a/b/w␣/dev/stdout f", nil, "read f"},
		// awk.
		{`awk {print} f`, nil, "read f"},
		{`awk BEGIN{system("id")}`, nil, "exec system()"},
		{`awk {print|"sh"}`, nil, "exec |"},
		{`awk {print>"out"}`, nil, "write > out"},
		{`awk {print>out}`, nil, "write > (named by the awk program)"},
		{`awk {if($1>2)print}`, nil, ""},
		{`awk -f prog f`, nil, "read -f prog; unknown -f; read f"},
		{`awk -v x=1 {print} n=2 f`, nil, "read f"},
		// find.
		{"find . -name x -delete", nil, "read .; delete -delete ."},
		{"find -delete", nil, "read .; delete -delete ."},
		// tar.
		{"tar czf a.tgz src", nil, "write -f a.tgz; read src"},
		{"tar -xf a.tar -C out", nil, "read -f out:a.tar; write -x out:."},
		{"tar -x -f a.tar --to-command=sh", nil, "exec --to-command; read -f a.tar"},
		{"tar -cf host:/x src", nil, "exec -f; read src"},
		{"tar -cI sh -f a src", nil, "exec -I; write -f a; read src"},
		// Every -f is an archive: tar -M reads them in turn.
		{"tar -tM -f host:/x -f a.tar", nil, "exec -f; read -f a.tar"},
		{"tar -tM -f a.tar -f host:/x", nil, "read -f a.tar; exec -f"},
		{"tar tfMf a.tar host:/x", nil, "read -f a.tar; exec -f"},
		{"tar -t", []string{"TAPE"}, "env TAPE"},
		// git.
		{"git diff --output=x", nil, "write --output x"},
		{"git diff --output x", nil, "write --output x"},
		{"git -C sub diff --output x", nil, "write --output sub:x"},
		{"git log -p --output=~/.bashrc", nil, "write --output ~/.bashrc"},
		{"git -c core.pager=sh log", nil, "exec -c"},
		{"git --git-dir=/x log", nil, "exec --git-dir"},
		{"git status", []string{"GIT_TRACE"}, "env GIT_TRACE"},
		{"git status --frob", nil, "unknown --frob"},
		{"git status -sb", nil, ""},
		{"git status -uno", nil, ""},
		{"git status --untracked-files=all --ignored", nil, ""},
		{"git log --oneline --graph --decorate --all -n 20", nil, ""},
		{"git log -5 --since=2.weeks --author=x --format=%h -- a.go", nil, ""},
		{"git diff --cached --stat=200 -M50% -U0 --color-words", nil, ""},
		{"git show -s --pretty=fuller HEAD~1", nil, ""},
		{"rg -.n --hidden -g !vendor -t go foo", nil, ""},
		{"ls -la --color=auto --group-directories-first", nil, "read ."},
		{"tail -n +5 -f log", nil, "read log"},
		{"head -n -5 f", nil, "read f"},
		{"git diff --outp=x", nil, "unknown --outp"}, // git diff takes no abbreviations
		{"git frobnicate", nil, "unknown frobnicate"},
		{"git grep -O foo", nil, "exec -O"},
		{"git grep --open-files-in-pager=sh foo", nil, "exec --open-files-in-pager"},
		{"git diff --no-index a b", nil, "read a; read b"},
		// rg, grep.
		{"rg --pre sh x y", nil, "exec --pre; read y"},
		{"rg --pre=sh x", nil, "exec --pre"},
		{"rg -e x -f pats", nil, "read -f pats"},
		{"grep -rn foo .", nil, "read ."},
		{"grep -e foo -f pats a", nil, "read -f pats; read a"},
		// curl, wget.
		{"curl -o out https://x", nil, "write -o out; connect https://x"},
		{"curl -sSLo out https://x", nil, "write -o out; connect https://x"},
		{"curl -O https://x/a", nil, "write -O .; connect https://x/a"},
		{"curl -d @secret https://x", nil, "read -d secret; connect https://x"},
		{"curl -F f=@secret https://x", nil, "read -F secret; connect https://x"},
		{"curl -K cfg https://x", nil, "unknown -K; connect https://x"},
		{"wget -O out https://x", nil, "write -O out; connect https://x"},
		{"wget https://x", nil, "write .; connect https://x"},
		{"wget -e robots=off https://x", nil, "exec -e; write .; connect https://x"},
		{"curl -x http://p:3128 --url http://localhost:8081/ x", nil, "connect -x http://p:3128; connect --url http://localhost:8081/; connect x"},
		{"curl --doh-url https://dns.example/q http://localhost:8081", nil, "connect --doh-url https://dns.example/q; connect http://localhost:8081"},
		{"curl --resolve localhost:8081:10.0.0.1 localhost:8081", nil, "connect --resolve localhost:8081:10.0.0.1; connect localhost:8081"},
		{"wget -i urls.txt", nil, "read -i urls.txt; connect -i (the URLs the file lists)"},
		// make, go, npm, pip, python.
		{"make -f Makefile test", nil, "read -f Makefile; code -f Makefile"},
		{"make SHELL=/tmp/x", nil, "exec SHELL; code GNUmakefile makefile Makefile"},
		{"make --eval=x", nil, "exec --eval; code GNUmakefile makefile Makefile"},
		{"go test -o bin ./...", nil, "write -o bin; code .; code go.mod"},
		{"go test ./... -coverprofile=c.out", nil, "write -coverprofile c.out; code .; code go.mod"},
		{"go test -exec sh ./...", nil, "exec -exec; code .; code go.mod"},
		{"go build -ldflags=-extld=sh .", nil, "exec -ldflags; code .; code go.mod"},
		{"go build -ldflags=-s .", nil, "code .; code go.mod"},
		{"go generate ./...", nil, "exec generate"},
		{"go test ./...", []string{"GOFLAGS"}, "env GOFLAGS; code .; code go.mod"},
		{"npm test", nil, "exec package.json"},
		{"npm ls --json", nil, ""},
		{"npm --script-shell=sh ls", nil, "exec --script-shell"},
		{"pip list", nil, ""},
		{"pip install -t ../x pkg", nil, "exec; write -t ../x"},
		{"python -c x", nil, "exec -c x"},
		{"python -m pytest", nil, "exec -m pytest; code ."},
		{"python script.py", nil, "exec script.py"},
		{"python -V", nil, ""},
		{"python", nil, "exec"},
		{"python -Wignore -c x", nil, "exec -c x"},
		// Unknown commands: nothing.
		{"frob -o x", nil, ""},
	} {
		got := summary(Analyze(argv(strings.Fields(tc.cmd)...), tc.env))
		if got != tc.want {
			t.Errorf("Analyze(%q, %v) = %q, want %q", tc.cmd, tc.env, got, tc.want)
		}
	}
}

func TestRunTimeWordsWhereOptionsStand(t *testing.T) {
	for _, tc := range []struct {
		args []Arg
		want string
	}{
		{[]Arg{{Value: "sort", Static: true}, {Value: "", Static: false}, {Value: "a", Static: true}}, "unknown; read (run-time value); read a"},
		{[]Arg{{Value: "sort", Static: true}, {Value: "*", Glob: true}}, "unknown; read *"},
		{[]Arg{{Value: "sort", Static: true}, {Value: "src/*", Glob: true}}, "read src/*"},
		{[]Arg{{Value: "sort", Static: true}, {Value: "--", Static: true}, {Value: "*", Glob: true}}, "read *"},
		{[]Arg{{Value: "cat", Static: true}, {Value: "", Static: false}}, "read (run-time value)"},
		{[]Arg{{Value: "sort", Static: true}, {Value: "-o", Static: true}, {Value: "x", Static: false}}, "write -o x"},
	} {
		es := Analyze(tc.args, nil)
		got := summary(es)
		if got != tc.want {
			t.Errorf("Analyze(%v) = %q, want %q", tc.args, got, tc.want)
		}
	}
}

func TestCatalogCoversTheBrief(t *testing.T) {
	for _, c := range []string{"ls", "cat", "head", "tail", "wc", "grep", "rg", "pwd", "echo", "true", "git", "sort", "tee", "sed", "awk", "find", "xargs", "diff", "tar", "cp", "mv", "ln", "install", "touch", "mkdir", "chmod", "curl", "wget", "make", "go", "npm", "pip", "python"} {
		if !Known(c) {
			t.Errorf("the table does not describe %s", c)
		}
	}
	for _, sub := range []string{"status", "diff", "log", "show"} {
		if specs()["git"].sub[sub] == nil {
			t.Errorf("the table does not describe git %s", sub)
		}
	}
}
