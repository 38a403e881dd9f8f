package shellparse

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// TestSystemScripts reads the shell scripts the system ships (every file
// under /usr/bin, /usr/sbin, /usr/lib, /usr/share and /etc whose first
// line names sh or bash, and that `bash -n` accepts) in the dialect its
// first line names: at most 1% may fail to parse or be blocked. Reading
// as bash runs scripts must not cost the scripts people run every day.
func TestSystemScripts(t *testing.T) {
	if testing.Short() {
		t.Skip("reads hundreds of system scripts")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		requireOrSkip(t, "bash is not installed: the system script check needs bash -n")
	}
	var scripts []string
	for _, root := range []string{"/usr/bin", "/usr/sbin", "/usr/lib", "/usr/share", "/etc"} {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || len(scripts) >= 500 {
				return fs.SkipDir
			}
			if !d.Type().IsRegular() {
				return nil
			}
			if info, err := d.Info(); err != nil || info.Size() > 256<<10 || info.Size() < 16 {
				return nil
			}
			f, err := os.Open(p)
			if err != nil {
				return nil
			}
			head := make([]byte, 2)
			n, _ := f.Read(head)
			f.Close()
			if n == 2 && string(head) == "#!" {
				scripts = append(scripts, p)
			}
			return nil
		})
	}
	sort.Strings(scripts)
	tried, failed := 0, 0
	var fails []string
	for _, p := range scripts {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		first, _, _ := bytes.Cut(b, []byte("\n"))
		var lang syntax.LangVariant
		switch {
		case !bytes.HasPrefix(first, []byte("#!")):
			continue
		case bytes.Contains(first, []byte("bash")):
			lang = syntax.LangBash
		case bytes.HasSuffix(bytes.TrimSpace(first), []byte("/sh")) || bytes.Contains(first, []byte("/sh ")):
			lang = syntax.LangPOSIX
		default:
			continue
		}
		if exec.Command(bash, "-n", p).Run() != nil {
			continue
		}
		tried++
		s, err := Parse(string(b), Options{Dialect: lang})
		switch {
		case err != nil:
			failed++
			fails = append(fails, p+": "+err.Error())
		default:
			for _, f := range s.Findings {
				if f.Severity == Block {
					failed++
					fails = append(fails, p+": "+f.Reason)
					break
				}
			}
		}
	}
	if tried < 50 {
		t.Skipf("only %d shell scripts found on this system; the check needs a distribution's scripts", tried)
	}
	t.Logf("%d system scripts read, %d failed", tried, failed)
	if failed*100 > tried {
		t.Errorf("%d of %d system scripts failed (more than 1%%):\n%s", failed, tried, strings.Join(fails, "\n"))
	} else if failed > 0 {
		t.Logf("failures:\n%s", strings.Join(fails, "\n"))
	}
}
