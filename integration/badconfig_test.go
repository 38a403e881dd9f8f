//go:build linux

package integration

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
)

// badConfigs are configs an attacker can put in a repository, each of
// which once cost seconds, hundreds of megabytes or megabytes of error
// text on every command run there.
//
// Each is made when its test runs: the memory a child reports
// (ru_maxrss) is at least this process's own when it started it.
func badConfigs() map[string]func() string {
	return map[string]func() string{
		// 100 aliases of one 100 KB string: 10 MB once expanded.
		"aliases of a long string": func() string {
			var b strings.Builder
			b.WriteString("shell:\n  rules:\n    - &s \"" + strings.Repeat("x", 100_000) + "\"\n")
			for range 100 {
				b.WriteString("    - *s\n")
			}
			return b.String()
		},
		// Nested aliases: 9^9 strings once expanded.
		"billion laughs": func() string {
			s := "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
			for i := 1; i < 9; i++ {
				prev, cur := string(rune('a'+i-1)), string(rune('a'+i))
				s += cur + ": &" + cur + " [" + strings.Repeat("*"+prev+", ", 8) + "*" + prev + "]\n"
			}
			return s
		},
		// 5 million list items: a 10 MB file.
		"5M deny items": func() string { return "sandbox:\n  deny: [" + strings.Repeat("1,", 5_000_000) + "1]\n" },
		// As many items as fit under the size limit, each an error.
		"60k deny items": func() string { return "sandbox:\n  deny: [" + strings.Repeat("1,", 60_000) + "1]\n" },
		// A 10 MB value.
		"10 MB mode": func() string { return "mode: \"" + strings.Repeat("x", 10<<20) + "\"\n" },
		// A value that fits, quoted in the error.
		"200 KB mode": func() string { return "mode: \"" + strings.Repeat("x", 200<<10) + "\"\n" },
		// A 200 KB key.
		"200 KB key": func() string { return strings.Repeat("k", 200<<10) + ": 1\n" },
		// Valid YAML whose every aliased example carries the file's
		// name, in a directory 3.8 KB deep (deepDir): hundreds of
		// megabytes once decoded.
		deepConfig: func() string {
			return "shell:\n  examples:\n    allow: &l [&a a" + strings.Repeat(",*a", 40_000) + "]\n    ask: *l\n"
		},
	}
}

// deepConfig is the bad config that is put in deepDir.
const deepConfig = "aliased examples in a deep directory"

// deepDir makes a directory below dir whose path is about 3.8 KB long.
func deepDir(t *testing.T, dir string) string {
	for range 15 {
		dir = filepath.Join(dir, strings.Repeat("d", 250))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestBadConfigBounded runs a command under each bad config, as an
// untrusted project file and as --config: guardrun fails (125) with a
// short error, in bounded memory.
func TestBadConfigBounded(t *testing.T) {
	for name, gen := range badConfigs() {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, runConfig)
			dir := w.work
			if name == deepConfig {
				dir = deepDir(t, dir)
			}
			proj := filepath.Join(dir, ".guardrun.yaml")
			if err := os.WriteFile(proj, []byte(gen()), 0o644); err != nil {
				t.Fatal(err)
			}
			debug.FreeOSMemory()
			for _, how := range []struct {
				what string
				env  string
				args []string
			}{
				{"untrusted project file", "GUARDRUN_CONFIG=", []string{"-c", "true"}},
				{"--config", "", []string{"--config", proj, "-c", "true"}},
			} {
				cmd := exec.Command(guardrunBin, how.args...)
				cmd.Dir = dir
				cmd.Env = append(append([]string{}, w.env...), how.env)
				cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				err := cmd.Run()
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != 125 {
					t.Fatalf("%s: %v, want exit status 125; stderr:\n%.2000s", how.what, err, stderr.String())
				}
				if n := stderr.Len(); n > 64<<10 {
					t.Errorf("%s: %d bytes on stderr, want at most 64 KiB", how.what, n)
				}
				if !strings.Contains(stderr.String(), ".guardrun.yaml") {
					t.Errorf("%s: the error does not name the file:\n%.2000s", how.what, stderr.String())
				}
				ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
				if !ok {
					t.Fatal("no resource usage")
				}
				// Maxrss is at least this process's memory at the fork,
				// so it bounds guardrun's from above.
				if rss := ru.Maxrss * 1024; rss > 100<<20 {
					t.Errorf("%s: peak memory %d MiB, want under 100 MiB", how.what, rss>>20)
				}
				t.Logf("%s: %d bytes of stderr, peak memory %d MiB, %.2fs CPU", how.what, stderr.Len(), ru.Maxrss>>10,
					float64(ru.Utime.Nano()+ru.Stime.Nano())/1e9)
			}
		})
	}
}
