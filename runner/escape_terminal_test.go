//go:build linux

package runner

import (
	"strings"
	"testing"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// TestTerminalEscapes: a command's stdin may be the person's terminal
// (an agent's pty). It must not change that terminal's line discipline,
// which outlives the command: N_NULL leaves the person's shell neither
// input nor output, and the other disciplines run their own kernel code
// on it. The probe tries from inside the sandbox; the host reads the
// discipline after.
func TestTerminalEscapes(t *testing.T) {
	requireSandbox(t)
	f := newFixture(t)
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	defer tty.Close()
	disc := func(t *testing.T) int {
		t.Helper()
		d, err := unix.IoctlGetInt(int(tty.Fd()), unix.TIOCGETD)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"give the host's terminal the null line discipline", []string{"tiocsetd", "27"}},
		{"give the host's terminal the PPP line discipline", []string{"tiocsetd", "3"}},
		{"give the host's terminal the HDLC line discipline", []string{"tiocsetd", "13"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := disc(t)
			status, out := f.run(t, tty, append([]string{probePath}, tc.args...)...)
			m := probeResult(t, status, out)
			switch {
			case !strings.HasPrefix(m[2], "refused"):
				t.Errorf("NOT REFUSED: %s", strings.TrimSpace(m[0]))
			}
			if now := disc(t); now != before {
				t.Errorf("the host's terminal has line discipline %d, not its %d", now, before)
				unix.IoctlSetPointerInt(int(tty.Fd()), unix.TIOCSETD, before)
			}
		})
	}
}
