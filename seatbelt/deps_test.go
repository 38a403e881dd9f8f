package seatbelt

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestPureFiles keeps the renderer pure: only the darwin files run
// anything, and the non-darwin stub may name exec.Cmd but nothing else.
// It reads imports file by file because go list -deps would see the stub's
// os/exec on every platform.
func TestPureFiles(t *testing.T) {
	forbidden := []string{"os", "os/exec", "syscall", "golang.org/x/sys/unix", "unsafe", "net"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || strings.HasSuffix(f, "_darwin.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		allowed := []string{}
		if f == "exec_other.go" {
			allowed = []string{"os/exec"}
		}
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if slices.Contains(forbidden, p) && !slices.Contains(allowed, p) {
				t.Errorf("%s imports %s; only *_darwin.go files may", f, p)
			}
		}
	}
}
