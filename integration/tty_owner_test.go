//go:build linux

package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ptyAgent is an agent that runs the command in its argv in a pty of its
// own, as Codex does for a command the model starts with tty: it reads
// everything shown there and, as a model behind it would, types y once a
// prompt asks and then the confirmation code it shows. It prints what
// guardrun said and the command's status.
const ptyAgent = `import os, pty, re, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
buf, typed = b"", []
deadline = time.time() + 20
while time.time() < deadline:
    try:
        data = os.read(fd, 4096)
    except OSError:
        break
    if not data:
        break
    buf += data
    if "y" not in typed and b"approve once" in buf:
        time.sleep(0.6)
        os.write(fd, b"y")
        typed.append("y")
    m = re.search(rb"to confirm, type (?:\x1b\[[0-9;]*m)*([a-z]+)", buf)
    if m and "code" not in typed:
        os.write(fd, m.group(1))
        typed.append("code")
_, st = os.waitpid(pid, 0)
for line in buf.decode(errors="replace").splitlines():
    if line.startswith("guardrun:"):
        print("agent saw: " + re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", line))
print("agent: typed %s, status %d" % (typed, os.waitstatus_to_exitcode(st)))
`

// TestTtyOfAProgramIsNoPersons: guardrun run in a pty that a program on
// the person's terminal made (its holder runs on a terminal) draws no
// prompt there: interactive mode acts as strict, says why, and the audit
// records the mode. The program typing y and the code approves nothing.
func TestTtyOfAProgramIsNoPersons(t *testing.T) {
	requireSandbox(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("needs python3 for the agent")
	}
	w := runWorld(t, superviseConfig)
	agent := filepath.Join(w.tmp, "ptyagent.py")
	if err := os.WriteFile(agent, []byte(ptyAgent), 0o644); err != nil {
		t.Fatal(err)
	}
	// The person's terminal: tmux, whose server runs on none.
	m := startTmux(t, w, nil, "python3 "+shq(agent)+" "+shq(guardrunBin)+" -c 'touch DANGEROUS'")
	s := m.waitScreen(`agent: typed .*status \d+`)
	// The terminal wraps the long line wherever its width falls (the
	// config's path in it is a temporary directory's): read the screen
	// as words, and each want as words too.
	words := strings.Join(strings.Fields(s), " ")
	for _, want := range []string{
		"agent: typed [], status 77",
		"guardrun: denied (the terminal /dev/pts/",
		"is a program's, not a person's: python3",
		"interactive mode acts as strict): touch DANGEROUS needs approval",
		"run the agent under `guardrun supervise` to be asked",
	} {
		if !strings.Contains(words, want) && !strings.Contains(strings.ReplaceAll(s, "\n", ""), want) {
			t.Errorf("screen lacks %q:\n%s", want, s)
		}
	}
	if fileIn(t, w, "DANGEROUS") {
		t.Fatal("the agent approved its own request")
	}
	recs := recordsOf(auditRecords(t, w), "touch DANGEROUS")
	if len(recs) != 1 || recs[0]["outcome"] != "refused" || recs[0]["decided_by"] != "mode" {
		t.Errorf("audit records %v, want one refused by the mode", recs)
	}

	// The same agent on the person's terminal itself, not in a pty of
	// its own: that terminal is the person's, and the prompt is drawn.
	m = startTmux(t, w, nil, shq(guardrunBin)+" -c 'touch asked'")
	m.waitPrompt(`\$ touch asked`)
	settled()
	m.keys("n")
	m.waitScreen(`note for the agent`)
	m.enter()
	if fileIn(t, w, "asked") {
		t.Error("denied request ran")
	}
}

// TestTtyOfTheTestIsAPersons: a pty held by a process on no terminal
// (the test, as a terminal emulator) is a person's: guardrun prompts.
func TestTtyOfTheTestIsAPersons(t *testing.T) {
	requireSandbox(t)
	w := runWorld(t, superviseConfig)
	p := startPrompt(t, w, nil, "-c", "touch asked")
	p.waitFor("[n] deny", 1)
	p.send("n")
	p.send("\r")
	if code := p.wait(); code != 77 || exists(filepath.Join(w.work, "asked")) {
		t.Errorf("exit %d (want 77), ran %v", code, exists(filepath.Join(w.work, "asked")))
	}
}

// TestSuperviseWithoutTerminal: guardrun supervise whose input is no
// terminal shows no prompt and reads no answer from that input: it says
// so once, the agent's commands that need approval are refused as in
// strict mode, and the audit records the mode, not a person.
func TestSuperviseWithoutTerminal(t *testing.T) {
	requireSandbox(t)
	w := runWorld(t, superviseConfig)
	r := proc{dir: w.work, env: w.env, stdin: strings.NewReader("y\ry\rs\r")}.run(guardrunBin, "supervise", "--",
		"sh", "-c", shq(guardrunBin)+` -c 'touch made'; echo "agent: status $?"; `+shq(guardrunBin)+` -c 'echo allowed'`)
	if r.code != 0 || r.err != nil {
		t.Fatalf("exit %d, %v\nstdout %s\nstderr %s", r.code, r.err, r.stdout, r.stderr)
	}
	for _, want := range []string{"agent: status 77", "guardrun: denied (guardrun supervise has no terminal to ask on (its standard input is not one); interactive mode acts as strict): touch made needs approval", "allowed"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("the agent's output lacks %q:\n%s", want, r.stdout)
		}
	}
	if prompts(r.stdout) > 0 {
		t.Errorf("a prompt was drawn:\n%s", r.stdout)
	}
	if n := strings.Count(r.stderr, "standard input is not a terminal"); n != 1 {
		t.Errorf("said %d times that nobody can answer:\n%s", n, r.stderr)
	}
	if exists(filepath.Join(w.work, "made")) {
		t.Error("the refused command ran")
	}
	recs := recordsOf(auditRecords(t, w), "touch made")
	if len(recs) != 1 || recs[0]["outcome"] != "refused" || recs[0]["decided_by"] != "mode" {
		t.Errorf("audit records %v, want one refused by the mode", recs)
	}
}
