package bwrap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
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
	if p, err := exec.LookPath("bwrap"); err == nil {
		return p, nil
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
