package serve

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestReadProcWhole: the peer check reads /proc files with readProc; a
// file longer than its first buffer is read to its end, so that a line
// the check needs (Seccomp_filters, NoNewPrivs, Groups with many
// groups) is never cut off and taken as missing or short.
func TestReadProcWhole(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1, 4095, 4096, 4097, 3*4096 + 7, 1 << 20} {
		want := bytes.Repeat([]byte("Groups:\t1 2 3\n"), n/14+1)[:n]
		f := filepath.Join(dir, strconv.Itoa(n))
		if err := os.WriteFile(f, want, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := readProc(f)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%d bytes: read %d bytes, %v", n, len(got), err)
		}
	}
	// A /proc file is read to its end, not to its (zero) size: the
	// status holds every field the peer check compares.
	status, err := readProc("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range append([]string{"Seccomp_filters", "NoNewPrivs", "Umask"}, credFields...) {
		if _, ok := statusField(status, name); !ok {
			t.Errorf("no %s in /proc/self/status as readProc read it:\n%s", name, status)
		}
	}
	if _, err := readProc(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Errorf("a missing file: %v, want not-exist", err)
	}
}

// TestReadProcInfoOfGonePeer: the peer check of a process that has
// exited (its pid free, or reused by another) fails instead of
// reading nothing as "no seccomp filter, no no_new_privs".
func TestReadProcInfoOfGonePeer(t *testing.T) {
	p, err := os.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{})
	if err != nil {
		t.Skip("cannot start /bin/true:", err)
	}
	pid := p.Pid
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	if pi, err := readProcInfo(pid); err == nil {
		if _, statErr := os.Stat("/proc/" + strconv.Itoa(pid)); statErr == nil {
			t.Skip("the pid was reused at once")
		}
		t.Errorf("readProcInfo of the exited %d: %+v, want an error", pid, pi)
	}
}
