package bwrap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

var (
	checkOnce sync.Once
	checkErr  error
)

// Check reports whether bubblewrap can build guardrun's sandbox here, as a
// sentence saying how to fix it when it cannot. It runs a trial sandbox
// once per process and remembers the answer.
func Check() error {
	checkOnce.Do(func() { checkErr = check() })
	return checkErr
}

func check() error {
	bin, err := lookBwrap()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The namespaces and options guardrun relies on, around a trivial
	// command; the seccomp filter is checked by seccomp.Supported.
	cmd := exec.CommandContext(ctx, bin,
		"--unshare-user", "--disable-userns", "--unshare-pid", "--unshare-ipc",
		"--unshare-uts", "--unshare-cgroup", "--unshare-net",
		"--die-with-parent", "--new-session", "--cap-drop", "ALL",
		"--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev",
		"--", "true")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return explain(stderr.String(), err)
	}
	return nil
}

// lookBwrap finds bwrap on PATH, else in /usr/bin (PATH may be minimal
// when guardrun is started as $SHELL). Looked up once per process.
var lookBwrap = sync.OnceValues(findBwrap)

func findBwrap() (string, error) {
	return FindIn(os.Getenv("PATH"))
}

// Binary is the bwrap this process runs: the one found on its PATH when
// it first needed it (see FindIn).
func Binary() (string, error) { return lookBwrap() }

// FindIn is the bwrap a process whose PATH is path would run: the first
// on path, else /usr/bin/bwrap.
func FindIn(path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			// exec.LookPath refuses a bwrap found relative to the
			// working directory (exec.ErrDot), and so skips it.
			continue
		}
		p := filepath.Join(dir, "bwrap")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	if fi, err := os.Stat("/usr/bin/bwrap"); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return "/usr/bin/bwrap", nil
	}
	return "", errors.New("bubblewrap is not installed: install bubblewrap (apt-get install bubblewrap, dnf install bubblewrap, pacman -S bubblewrap)")
}

// explain turns a failed trial run into a sentence a person can act on.
func explain(stderr string, err error) error {
	msg := strings.TrimSpace(stderr)
	low := strings.ToLower(msg)
	switch {
	case strings.Contains(low, "unknown option") && strings.Contains(low, "disable-userns"):
		return fmt.Errorf("bubblewrap is too old: guardrun needs version 0.8 or later (--disable-userns); bwrap said: %s", msg)
	case strings.Contains(low, "can't mount proc"), strings.Contains(low, "mount proc"):
		return fmt.Errorf("bubblewrap cannot mount a fresh /proc here, which happens inside containers that hide or lock /proc: "+
			"run guardrun on the host or in a container allowed to create namespaces; bwrap said: %s", msg)
	case strings.Contains(low, "no permissions to creating new namespace"),
		strings.Contains(low, "creating new namespace failed"),
		strings.Contains(low, "no space left on device"),
		strings.Contains(low, "setting up uid map"),
		strings.Contains(low, "write to uid_map"),
		strings.Contains(low, "failed rtm_newaddr"),
		strings.Contains(low, "operation not permitted"):
		return fmt.Errorf("user namespaces are disabled or restricted, so bubblewrap cannot build a sandbox: "+
			"enable them with `sysctl -w kernel.unprivileged_userns_clone=1` (Debian), "+
			"`sysctl -w user.max_user_namespaces=15000` (if it is 0), or on Ubuntu 23.10+ "+
			"`sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` or an AppArmor profile for bwrap; "+
			"bwrap said: %s", msg)
	case msg == "":
		return fmt.Errorf("bubblewrap does not work here: %v", err)
	default:
		return fmt.Errorf("bubblewrap does not work here: %s", msg)
	}
}

// CheckCached is Check that remembers a success across processes in the
// file at path, so that guardrun as a login shell does not start a trial
// sandbox before every command. The memory is keyed by the bwrap binary
// (path, inode, modification time), the boot and the user: an upgrade or
// a reboot runs the trial again. A sysctl change without a reboot is
// caught when the real sandbox fails to start, which is an error too; it
// never runs anything unsandboxed.
//
// also is the rest of the caller's check (the seccomp filter): it runs
// only when the memory does not answer, and a success is remembered only
// when both pass.
func CheckCached(path string, also func() error) error {
	key, kerr := cacheKey()
	if kerr == nil && path != "" {
		if b, err := os.ReadFile(path); err == nil && string(b) == key {
			return nil
		}
	}
	if err := Check(); err != nil {
		return err
	}
	if also != nil {
		if err := also(); err != nil {
			return err
		}
	}
	if kerr == nil && path != "" {
		// Best effort: a cache that cannot be written costs a trial run.
		_ = writeCache(path, key)
	}
	return nil
}

// CacheKey is what CheckCached's memory is keyed by (the bwrap binary,
// the boot, the user and the user namespace), for a caller that keeps a
// memory of its own about this bwrap.
func CacheKey() (string, error) { return cacheKey() }

func cacheKey() (string, error) {
	bin, err := lookBwrap()
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(bin)
	if err != nil {
		return "", err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", errors.New("no inode")
	}
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", err
	}
	// The user namespace too: the same state directory seen from a
	// container or a sandbox without user namespaces (same boot, same
	// bwrap) must not inherit the host's answer.
	userns, err := os.Readlink("/proc/self/ns/user")
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("bwrap-ok v2 %s ino=%d mtime=%d.%d boot=%s uid=%d userns=%s\n",
		bin, st.Ino, st.Mtim.Sec, st.Mtim.Nsec, strings.TrimSpace(string(boot)), os.Getuid(), userns), nil
}

func writeCache(path, key string) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".sandbox-ok-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.WriteString(key); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
