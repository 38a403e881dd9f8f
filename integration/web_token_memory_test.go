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

	"github.com/guardrun/guardrun/internal/testing/testenv"
)

// memProbe, a process of the same user outside any sandbox, reads
// another process's memory through /proc/PID/mem looking for a string.
const memProbe = `
import re, sys
pid, want = sys.argv[1], sys.argv[2].encode()
try:
    mem = open("/proc/%s/mem" % pid, "rb", 0)
except OSError as e:
    print("refused:", e.strerror); sys.exit(0)
for line in open("/proc/%s/maps" % pid):
    m = re.match(r"([0-9a-f]+)-([0-9a-f]+) rw", line)
    if not m:
        continue
    lo, hi = int(m.group(1), 16), int(m.group(2), 16)
    if hi - lo > 256 << 20:
        continue
    try:
        mem.seek(lo); data = mem.read(hi - lo)
    except OSError:
        continue
    if want in data:
        print("LEAK found it"); sys.exit(0)
print("not found")
`

// Another process of the person's user (an agent's own, outside any
// sandbox) cannot read guardrun web's memory, where the page's token
// is: the process is not dumpable, as ssh-agent is not.
func TestWebTokenNotInReadableMemory(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run guardrun web as an unprivileged user")
	}
	testenvPython(t)
	testenv.LookPath(t, "runuser")
	const user = "guardrun-test"
	testenv.User(t, user)
	dir, err := os.MkdirTemp("/var/tmp", "guardrun-web-mem-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.WriteFile(dir+"/probe.py", []byte(memProbe), 0o644)
	os.MkdirAll(dir+"/home", 0o755)
	os.MkdirAll(dir+"/work", 0o755)
	if out, err := exec.Command("chown", "-R", user, dir).CombinedOutput(); err != nil {
		t.Fatalf("chown: %v\n%s", err, out)
	}
	os.Chmod(dir, 0o755)
	web := exec.Command("runuser", "-u", user, "--", "env", "-i", "HOME="+dir+"/home", "PATH=/usr/local/bin:/usr/bin:/bin", guardrunBin, "web")
	web.Dir = dir + "/work"
	out, _ := web.StdoutPipe()
	web.Stderr = os.Stderr
	if err := web.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { web.Process.Kill(); web.Wait() }()
	var token string
	sc := bufio.NewScanner(out)
	for token == "" && sc.Scan() {
		if _, tok, ok := strings.Cut(sc.Text(), "?token="); ok {
			token = strings.TrimSpace(tok)
		}
	}
	go func() {
		for sc.Scan() {
		}
	}()
	if len(token) != 64 {
		t.Fatalf("guardrun web printed no token")
	}
	// runuser's child is guardrun web.
	var pid int
	for deadline := time.Now().Add(10 * time.Second); pid == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		kids, _ := os.ReadFile("/proc/" + strconv.Itoa(web.Process.Pid) + "/task/" + strconv.Itoa(web.Process.Pid) + "/children")
		pid, _ = strconv.Atoi(strings.TrimSpace(string(kids)))
	}
	if pid == 0 {
		t.Fatal("no guardrun web process under runuser")
	}
	defer syscall.Kill(pid, syscall.SIGKILL)
	probe := exec.Command("runuser", "-u", user, "--", "/usr/bin/python3", dir+"/probe.py", strconv.Itoa(pid), token)
	got, err := probe.CombinedOutput()
	if err != nil {
		t.Fatalf("the probe: %v\n%s", err, got)
	}
	t.Logf("another process of the user: %s", got)
	if !strings.HasPrefix(string(got), "refused") {
		t.Errorf("another process of the user read guardrun web's memory: %s", got)
	}
}
