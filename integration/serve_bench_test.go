//go:build linux

package integration

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// benchServer is a `guardrun serve` running for a benchmark: its socket
// and its pid, whose CPU time (with the sandboxes it waited for) counts
// towards each served run.
type benchServer struct {
	path string
	pid  int
}

// startBenchServer starts `gr serve` in w's environment with a command
// that only waits, and returns its socket once it is listening.
func startBenchServer(b *testing.B, gr string, w *world) *benchServer {
	b.Helper()
	c := exec.Command(gr, "serve", "--", "sh", "-c", `echo "$GUARDRUN_SERVER"; exec sleep 100000`)
	c.Dir, c.Env = w.work, w.env
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	out, err := c.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := c.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		c.Process.Signal(syscall.SIGTERM)
		c.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatalf("guardrun serve: %v", err)
	}
	return &benchServer{path: strings.TrimSpace(line), pid: c.Process.Pid}
}

// cpu is the server's CPU time so far, with its waited-for children.
func (s *benchServer) cpu() time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(s.pid) + "/stat")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	var ticks int64
	for _, i := range []int{14, 15, 16, 17} { // utime stime cutime cstime
		v, _ := strconv.ParseInt(f[i-3], 10, 64)
		ticks += v
	}
	return time.Duration(ticks) * time.Second / 100 // USER_HZ
}

// env is w's environment with the server named.
func (s *benchServer) env(w *world) []string {
	return append(append([]string{}, w.env...), "GUARDRUN_SERVER="+s.path)
}
