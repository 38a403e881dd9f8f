//go:build linux

package bashoracle

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/guardrun/guardrun/rules"
)

var (
	oracleOnce sync.Once
	oracle     *Oracle
	oracleErr  error
	enginesMu  sync.Mutex
	engines    = map[string]*rules.Engine{}
)

// newOracle sets up the oracle once per test binary. Without a sandbox
// or strace the tests skip, and fail under GUARDRUN_REQUIRE_SANDBOX=1:
// the scripts never run outside the sandbox.
func newOracle(t testing.TB) *Oracle {
	t.Helper()
	oracleOnce.Do(func() {
		dir, err := os.MkdirTemp("", "guardrun-oracle-")
		if err != nil {
			oracleErr = err
			return
		}
		oracle, oracleErr = New(dir)
	})
	if oracleErr != nil {
		if os.Getenv("GUARDRUN_REQUIRE_SANDBOX") == "1" {
			t.Fatalf("bash oracle unavailable (GUARDRUN_REQUIRE_SANDBOX=1): %v", oracleErr)
		}
		t.Skipf("bash oracle unavailable (set GUARDRUN_REQUIRE_SANDBOX=1 to fail instead): %v", oracleErr)
	}
	return oracle
}

func engineFor(t testing.TB, o *Oracle, program string) *rules.Engine {
	enginesMu.Lock()
	defer enginesMu.Unlock()
	if e := engines[program]; e != nil {
		return e
	}
	e, err := Engine(program, o.decideDir())
	if err != nil {
		t.Fatal(err)
	}
	engines[program] = e
	return e
}

// stats appends one line per judged script to $GUARDRUN_ORACLE_STATS,
// so that a long fuzzing run can say how many scripts it ran.
func stats(program, script string, out *Outcome) {
	p := os.Getenv("GUARDRUN_ORACLE_STATS")
	if p == "" {
		return
	}
	f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s\t%s\tran=%v\tmisses=%d\t%q\n", program, out.Decision.Decision, out.Ran, len(out.Misses), script)
}

func check(t *testing.T, program, script string) *Outcome {
	t.Helper()
	o := newOracle(t)
	out, err := o.Check(engineFor(t, o, program), program, script)
	if err != nil {
		t.Fatalf("%q: %v", script, err)
	}
	stats(program, script, out)
	if len(out.Misses) > 0 {
		var b strings.Builder
		for _, m := range out.Misses {
			b.WriteString("\n  " + m.String())
		}
		t.Errorf("%s -c %q was allowed, and bash did what the analysis did not report:%s", ShellFor(program), script, b.String())
	}
	return out
}

// TestOracleSeeds runs every seed under bash and under sh (dash).
func TestOracleSeeds(t *testing.T) {
	ran := 0
	for _, program := range []string{"/bin/bash", "/bin/sh"} {
		for _, s := range Seeds {
			if check(t, program, s).Ran {
				ran++
			}
		}
	}
	if ran < 20 {
		t.Errorf("only %d seeds were allowed and run; the oracle compares nothing", ran)
	}
}

// TestOracleSees: the oracle itself notices what an allowed script does
// that the analysis did not report. It compares a trace with an analysis
// of another script, which must come out as misses.
func TestOracleSees(t *testing.T) {
	o := newOracle(t)
	res, err := o.Run("/bin/bash", "ls >/dev/null; touch p; echo x > out.txt; (cd src && ls > in.txt)")
	if err != nil {
		t.Fatal(err)
	}
	s := mustParse(t, "ls")
	misses := Compare(s, res.Trace, res.Workspace)
	var got []string
	for _, m := range misses {
		got = append(got, m.String())
	}
	text := strings.Join(got, "\n")
	// out.txt is written by bash itself, src/in.txt by the child bash
	// forks for ls, in the directory the subshell changed to.
	if !strings.Contains(text, "exec: "+o.stubs+"/touch") || !strings.Contains(text, "write: openat "+res.Workspace+"/out.txt (by bash)") ||
		!strings.Contains(text, "write: openat "+res.Workspace+"/src/in.txt (by bash)") {
		t.Errorf("misses:\n%s\nwant the touch and the writes to out.txt and src/in.txt", text)
	}
	if strings.Contains(text, "/ls") {
		t.Errorf("ls was reported and must not be a miss:\n%s", text)
	}
}

// FuzzBashOracle mutates the seeds (grammar-aware) and fails when an
// allowed script makes bash run or write what the analysis missed.
func FuzzBashOracle(f *testing.F) {
	// The seeds themselves run in TestOracleSeeds; here one mutation of
	// each, which go test replays along with testdata/fuzz.
	for i := range Seeds {
		f.Add(uint16(i), i%2 == 0, []byte{byte(i), byte(i * 7)})
	}
	f.Fuzz(func(t *testing.T, seed uint16, sh bool, ops []byte) {
		program := "/bin/bash"
		if sh {
			program = "/bin/sh"
		}
		check(t, program, Mutate(Seeds[int(seed)%len(Seeds)], ops))
	})
}

// TestOracleSplices inserts a backslash-newline, a carriage return and
// other bytes the parser and bash may read differently at every offset of
// scripts that run touch through some construct: every variant the
// analysis allows (it saw no touch) must run no touch in bash or dash.
func TestOracleSplices(t *testing.T) {
	if testing.Short() {
		t.Skip("runs some 80 scripts in the sandbox")
	}
	bases := []string{
		`echo "$(touch p)"`, "echo `touch p`", `cat <(touch p)`, `echo ${x:-$(touch p)}`,
		`echo $((a[$(touch p)]))`, `ls; touch p`, `ls && touch p`, `ls | touch p`,
		"cat <<EOF\n$(touch p)\nEOF", `echo "${x:-'$(touch p)'}"`,
	}
	splices := []string{"\\\n", "\r", "\t", "#", "\\"}
	ran := 0
	for _, b := range bases {
		for _, sp := range splices {
			for i := 0; i <= len(b); i++ {
				src := b[:i] + sp + b[i:]
				o := newOracle(t)
				e := engineFor(t, o, "/bin/bash")
				if e.Script(src, o.decideDir()).Decision != rules.Allow {
					continue
				}
				for _, program := range []string{"/bin/bash", "/bin/sh"} {
					if check(t, program, src).Ran {
						ran++
					}
				}
			}
		}
	}
	t.Logf("%d allowed variants run", ran)
}
