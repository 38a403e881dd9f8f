package sandbox

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func lit(ws ...string) []Word {
	out := make([]Word, len(ws))
	for i, w := range ws {
		out[i] = Word{Text: w}
	}
	return out
}

func TestPredictionMatchExec(t *testing.T) {
	pr := &Prediction{Exec: []Exec{
		{Program: "sed", Args: lit("-n", "p", "file"), Part: "sed -n p file"},
		{Program: "grep", Args: append(lit("-l", "x"), Word{Any: true, Many: true}), Part: "xargs grep -l x"},
		{Program: "rm", Args: append(lit("-f"), Word{Text: "*.o", Glob: true, Many: true}), Part: "rm -f *.o"},
		{Program: "cp", Args: []Word{{Any: true}, {Text: "dst"}}, Part: "cp $f dst"},
		{Program: "/usr/lib/git-core/git-upload-pack", AnyArgs: true, Part: "git fetch"},
		{Program: "gzip", AnyArgs: true, Part: "tar -xzf a.tgz"},
		{Program: "find", Args: []Word{{Any: true, Many: true}, {Text: "b"}, {Text: "c*", Glob: true, Many: true}}, Part: "find ... b c*"},
	}}
	for _, tc := range []struct {
		name       string
		path, real string
		argv       []string
		want       string // the Part that allows it, "" for none
	}{
		{"the predicted argv", "/usr/bin/sed", "/usr/bin/sed", []string{"sed", "-n", "p", "file"}, "sed -n p file"},
		{"argv[0] is not compared", "/bin/sed", "/usr/bin/sed", []string{"anything", "-n", "p", "file"}, "sed -n p file"},
		{"one more argument", "/usr/bin/sed", "/usr/bin/sed", []string{"sed", "-n", "p", "file", "e"}, ""},
		{"a different script", "/usr/bin/sed", "/usr/bin/sed", []string{"sed", "-n", "1e touch M", "file"}, ""},
		{"one argument fewer", "/usr/bin/sed", "/usr/bin/sed", []string{"sed", "-n", "p"}, ""},
		{"another program with the argv", "/bin/sh", "/usr/bin/dash", []string{"sh", "-n", "p", "file"}, ""},
		{"a name that only ends like it", "/usr/bin/xsed", "/usr/bin/xsed", []string{"xsed", "-n", "p", "file"}, ""},
		{"Many takes none", "/usr/bin/grep", "/usr/bin/grep", []string{"grep", "-l", "x"}, "xargs grep -l x"},
		{"Many takes thousands", "/usr/bin/grep", "/usr/bin/grep", append([]string{"grep", "-l", "x"}, make([]string, 5000)...), "xargs grep -l x"},
		{"Many does not take what comes before it", "/usr/bin/grep", "/usr/bin/grep", []string{"grep", "-v", "x", "a"}, ""},
		{"a glob that expanded", "/bin/rm", "/usr/bin/rm", []string{"rm", "-f", "a.o", "b.o"}, "rm -f *.o"},
		{"a glob that did not expand", "/bin/rm", "/usr/bin/rm", []string{"rm", "-f", "*.o"}, "rm -f *.o"},
		{"a name the glob does not match", "/bin/rm", "/usr/bin/rm", []string{"rm", "-f", "a.o", "b.c"}, ""},
		{"a glob does not cross a slash", "/bin/rm", "/usr/bin/rm", []string{"rm", "-f", "../x.o"}, ""},
		{"a run-time word", "/bin/cp", "/usr/bin/cp", []string{"cp", "-r", "dst"}, "cp $f dst"},
		{"a run-time word is one word", "/bin/cp", "/usr/bin/cp", []string{"cp", "a", "b", "dst"}, ""},
		{"an absolute program by its path", "/usr/lib/git-core/git-upload-pack", "/usr/lib/git-core/git-upload-pack", []string{"git-upload-pack", "x"}, "git fetch"},
		{"an absolute program by the file it resolves to", "/x/git-upload-pack", "/usr/lib/git-core/git-upload-pack", []string{"git-upload-pack"}, "git fetch"},
		{"an absolute program is not a base name", "/tmp/git-upload-pack", "/tmp/git-upload-pack", []string{"git-upload-pack"}, ""},
		{"an earlier Many takes what a later one cannot", "/usr/bin/find", "/usr/bin/find", []string{"find", "b", "x", "b", "c1"}, "find ... b c*"},
		{"a helper with any argv", "/usr/bin/gzip", "/usr/bin/gzip", []string{"gzip", "-d", "-c"}, "tar -xzf a.tgz"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, ok := pr.MatchExec(tc.path, tc.real, tc.argv)
			got := ""
			if ok {
				got = e.Part
			}
			if d := cmp.Diff(got, tc.want); d != "" {
				t.Errorf("MatchExec(%q, %q, %q) (-got +want):\n%s", tc.path, tc.real, tc.argv, d)
			}
		})
	}
	var none *Prediction
	if _, ok := none.MatchExec("/bin/sh", "/bin/sh", []string{"sh"}); ok {
		t.Error("a nil prediction allowed an exec")
	}
	if _, ok := (&Prediction{}).MatchExec("/bin/sh", "/bin/sh", []string{"sh"}); ok {
		t.Error("an empty prediction allowed an exec")
	}
}

func TestPredictionMatchWrite(t *testing.T) {
	pr := &Prediction{Write: []PathPattern{
		{Path: "/app/out.txt", Part: "sed -n p file > out.txt"},
		{Path: "/app/build/*.o", Glob: true, Part: "cc -c *.c"},
		{Path: "/app/dist", Tree: true, Part: "cp -r src dist"},
		{Path: "/app/tmp-*", Glob: true, Tree: true, Part: "rm -r tmp-*"},
	}}
	for _, tc := range []struct {
		name, path, want string
	}{
		{"the predicted path", "/app/out.txt", "sed -n p file > out.txt"},
		{"a sibling", "/app/other.txt", ""},
		{"a longer name", "/app/out.txt.bak", ""},
		{"beneath a file", "/app/out.txt/x", ""},
		{"a relative path", "app/out.txt", ""},
		{"an unclean path", "/app/x/../out.txt", ""},
		{"a doubled slash", "/app//out.txt", ""},
		{"a glob", "/app/build/a.o", "cc -c *.c"},
		{"a glob does not cross a slash", "/app/build/sub/a.o", ""},
		{"a glob's other names", "/app/build/a.c", ""},
		{"a tree's root", "/app/dist", "cp -r src dist"},
		{"inside a tree", "/app/dist/js/app.js", "cp -r src dist"},
		{"beside a tree", "/app/distx", ""},
		{"a tree's parent", "/app", ""},
		{"inside a glob tree", "/app/tmp-1/a/b", "rm -r tmp-*"},
		{"beside a glob tree", "/app/tmp/a", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, ok := pr.MatchWrite(tc.path)
			got := ""
			if ok {
				got = w.Part
			}
			if d := cmp.Diff(got, tc.want); d != "" {
				t.Errorf("MatchWrite(%q) (-got +want):\n%s", tc.path, d)
			}
		})
	}
}

func TestHeldCallLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    HeldCall
		want string
	}{
		{"an exec", HeldCall{Kind: HeldExec, By: "sed -n ':a;e touch M'", Program: "/bin/sh", Argv: []string{"sh", "-c", "touch M"}},
			"guardrun: refused at run time: sed -n ':a;e touch M' wants to run sh -c 'touch M', which the analysis did not predict"},
		{"a write", HeldCall{Kind: HeldWrite, By: "sed -n p file", Path: "/app/other.txt"},
			"guardrun: refused at run time: sed -n p file wants to write /app/other.txt, which the analysis did not predict"},
		{"a rename", HeldCall{Kind: HeldRename, By: "mv a b", Source: "/app/a", Path: "/app/it's"},
			`guardrun: refused at run time: mv a b wants to rename /app/a to '/app/it'\''s', which the analysis did not predict`},
		{"a control character is escaped", HeldCall{Kind: HeldCreate, By: "touch x", Path: "/app/\x1b[2Jx"},
			`guardrun: refused at run time: touch x wants to create "/app/\x1b[2Jx", which the analysis did not predict`},
		{"refused without asking", HeldCall{Kind: HeldExec, By: "make", Program: "/usr/bin/cc", Argv: []string{"cc"}, Reason: "the caller has more than one thread"},
			"guardrun: refused at run time: make wants to run cc, which the analysis did not predict (the caller has more than one thread)"},
		{"no part known", HeldCall{Kind: HeldMetadata, Path: "/app/x"},
			"guardrun: refused at run time: the command wants to change the metadata of /app/x, which the analysis did not predict"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.h.Line(nil), tc.want); d != "" {
				t.Errorf("(-got +want):\n%s", d)
			}
		})
	}
}
