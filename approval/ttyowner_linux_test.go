package approval

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// ownerHelper is the environment variable that makes the test binary a
// helper of TestTerminalOwner: "report" prints whose its terminal is;
// "hold" and "hold-nested" make a pty and run the next helper on it
// ("report", or "hold" on a terminal of its own).
const ownerHelper = "GUARDRUN_TEST_TTYOWNER"

// reportBin is the environment variable naming the binary that reports.
const reportBin = "GUARDRUN_TEST_TTYOWNER_REPORT"

func TestTerminalOwnerHelper(t *testing.T) {
	switch os.Getenv(ownerHelper) {
	case "":
		t.Skip("a helper of TestTerminalOwner")
	case "report":
		f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
		if err != nil {
			os.Exit(3)
		}
		b, _ := json.Marshal(TerminalOwnerOf(f))
		os.Stdout.Write(append(b, '\n'))
		os.Exit(0)
	case "hold":
		os.Exit(holdPty("report"))
	case "hold-nested":
		os.Exit(holdPty("hold"))
	case "hold-hidden":
		os.Exit(holdHidden())
	}
}

// holdPty runs the helper next on a new pty it holds, and copies what
// that shows to stdout.
func holdPty(next string) int {
	pm, ps, err := pty.Open()
	if err != nil {
		return 4
	}
	bin := os.Args[0]
	if next == "report" {
		bin = os.Getenv(reportBin)
	}
	cmd := exec.Command(bin, "-test.run=^TestTerminalOwnerHelper$")
	cmd.Env = append(os.Environ(), ownerHelper+"="+next)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = ps, ps, ps
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		return 5
	}
	ps.Close()
	io.Copy(os.Stdout, pm) // until the last holder of the terminal closed it
	cmd.Wait()
	return 0
}

// holdHidden is holdPty for a holder that hides its open files from the
// reporting user, as sshd's session process does: it runs as root (a
// copy of the test binary named as the holder should be named: the
// process's name is its program's), undumpable, and the report runs as
// nobody.
func holdHidden() int {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return 7
	}
	pm, ps, err := pty.Open()
	if err != nil {
		return 4
	}
	cmd := exec.Command(os.Getenv(reportBin), "-test.run=^TestTerminalOwnerHelper$")
	cmd.Env = append(os.Environ(), ownerHelper+"=report")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = ps, ps, ps
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true,
		Credential: &syscall.Credential{Uid: 65534, Gid: 65534, NoSetGroups: true}}
	if err := cmd.Start(); err != nil {
		return 5
	}
	ps.Close()
	io.Copy(os.Stdout, pm)
	cmd.Wait()
	return 0
}

// TestTerminalOwnerHidden: a terminal whose holder this user cannot read
// is a person's only when that holder is an ancestor named as OpenSSH's
// session process is, on no terminal of its own (the terminal of an ssh
// login, as an unprivileged user sees it); any other hidden holder fails
// closed.
func TestTerminalOwnerHidden(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to hold a pty as root and report as nobody")
	}
	if _, err := os.Stat("/dev/ptmx"); err != nil {
		t.Skip("no ptys")
	}
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "ttyowner-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	reportCopy := dir + "/report.test"
	for _, p := range []string{dir + "/sshd", dir + "/agent", reportCopy} {
		if err := os.WriteFile(p, self, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, holder string
		person       bool
	}{
		{"held by sshd, hidden", "sshd", true},
		{"held by another program, hidden", "agent", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(dir+"/"+tc.holder, "-test.run=^TestTerminalOwnerHelper$")
			cmd.Env = append(os.Environ(), ownerHelper+"=hold-hidden", reportBin+"="+reportCopy)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			var got TerminalOwner
			found := false
			sc := bufio.NewScanner(strings.NewReader(string(out)))
			for sc.Scan() {
				if l := strings.TrimSpace(sc.Text()); strings.HasPrefix(l, "{") {
					if err := json.Unmarshal([]byte(l), &got); err != nil {
						t.Fatal(err)
					}
					found = true
				}
			}
			if !found {
				t.Fatalf("the report did not run: %q", out)
			}
			if got.Person != tc.person {
				t.Errorf("got %+v, want person %v", got, tc.person)
			}
		})
	}
}

// TestTerminalOwner: a pty held by a process on no terminal (as a
// terminal emulator, sshd or the tmux server hold theirs) is a person's;
// a pty held by a process that itself runs on a terminal (as Codex holds
// the one it makes for a command) is a program's.
func TestTerminalOwner(t *testing.T) {
	if _, err := os.Stat("/dev/ptmx"); err != nil {
		t.Skip("no ptys")
	}
	// The holders are another program than the one that reports (a
	// copy of this test): a holder that is the same program is taken
	// for a supervisor holding its agent's pty.
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	holderBin := t.TempDir() + "/holder.test"
	if err := os.WriteFile(holderBin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, helper, holder string
		person               bool
		why                  string
	}{
		{"held by a process on no terminal", "hold", holderBin, true, ""},
		{"held by a process on a terminal", "hold-nested", holderBin, false, "is a program's, not a person's"},
		{"held by the same program (a supervisor)", "hold", os.Args[0], false, "runs an agent in, not a person's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(tc.holder, "-test.run=^TestTerminalOwnerHelper$")
			cmd.Env = append(os.Environ(), ownerHelper+"="+tc.helper, reportBin+"="+os.Args[0])
			// The holder runs on no terminal: a session of its own.
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			var got TerminalOwner
			sc := bufio.NewScanner(strings.NewReader(string(out)))
			for sc.Scan() {
				if l := strings.TrimSpace(sc.Text()); strings.HasPrefix(l, "{") {
					if err := json.Unmarshal([]byte(l), &got); err != nil {
						t.Fatal(err)
					}
				}
			}
			if got.Person != tc.person || got.PID == 0 {
				t.Errorf("got %+v, want person %v and the holder named", got, tc.person)
			}
			if !strings.Contains(got.Why, tc.why) {
				t.Errorf("why %q", got.Why)
			}
		})
	}
}
