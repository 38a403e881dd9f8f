package seatbelt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/guardrun/guardrun/sandbox"
)

// sandboxExec is fixed rather than looked up in $PATH: a sandbox launcher
// found through the caller's environment could be anything.
const sandboxExec = "/usr/bin/sandbox-exec"

// waitDelay bounds how long Wait waits after the context is cancelled and
// SIGTERM was sent before the process group is killed.
const waitDelay = 5 * time.Second

// tmpDirs remembers the per-run directory Command created for each Cmd so
// Cleanup removes exactly that one and nothing named by the environment.
var tmpDirs sync.Map // *exec.Cmd -> string

// Command returns argv prepared to run under sandbox-exec with p's profile,
// in p.Cwd, with env minus p.EnvDeny (and HOME set to p.Home when given).
// A nil env means an empty environment, never the caller's.
//
// With p.PrivateTmp, Command creates a fresh 0700 directory for the run,
// passes it as the TMPDIR parameter and environment variable, and the caller
// must call Cleanup(cmd) after Wait to remove it.
//
// Cancelling ctx sends SIGTERM to the command's process group (the child is
// started in its own group; callers that need a session for a pty may
// replace SysProcAttr, keeping Setsid so the group still exists) and SIGKILL
// after a grace period.
func Command(ctx context.Context, p *sandbox.Profile, argv []string, env []string) (*exec.Cmd, error) {
	if p == nil {
		return nil, errors.New("seatbelt: nil profile")
	}
	if len(argv) == 0 {
		return nil, errors.New("seatbelt: empty command")
	}
	if p.Cwd != "" {
		if err := checkPath(p.Cwd); err != nil {
			return nil, fmt.Errorf("seatbelt: cwd %q: %w", p.Cwd, err)
		}
	}
	r, err := Render(p)
	if err != nil {
		return nil, err
	}
	env, err = filterEnv(env, p.EnvDeny)
	if err != nil {
		return nil, err
	}
	if p.Home != "" {
		env = setEnv(env, "HOME", p.Home)
	}
	var tmp string
	if p.PrivateTmp {
		if tmp, err = makeTmp(); err != nil {
			return nil, err
		}
		env = setEnv(env, "TMPDIR", tmp+"/")
	}
	args, err := r.Args(tmp, argv)
	if err != nil {
		removeTmp(tmp)
		return nil, err
	}
	cmd := exec.CommandContext(ctx, sandboxExec, args...)
	cmd.Dir = p.Cwd
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM); err == nil {
			return nil
		}
		return cmd.Process.Signal(syscall.SIGTERM)
	}
	cmd.WaitDelay = waitDelay
	if tmp != "" {
		tmpDirs.Store(cmd, tmp)
	}
	return cmd, nil
}

// Cleanup removes the private temporary directory Command created for cmd,
// if any. It is safe to call more than once and for any Cmd.
func Cleanup(cmd *exec.Cmd) error {
	v, ok := tmpDirs.LoadAndDelete(cmd)
	if !ok {
		return nil
	}
	if err := os.RemoveAll(v.(string)); err != nil {
		return fmt.Errorf("seatbelt: remove private tmp: %w", err)
	}
	return nil
}

// makeTmp creates the run's directory and returns its resolved path: the
// user's temporary directory lives under /var/folders, a symlink the
// sandbox never sees.
func makeTmp() (string, error) {
	dir, err := os.MkdirTemp("", "guardrun-tmp-")
	if err != nil {
		return "", fmt.Errorf("seatbelt: private tmp: %w", err)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		os.Remove(dir)
		return "", fmt.Errorf("seatbelt: private tmp: %w", err)
	}
	return real, nil
}

func removeTmp(dir string) {
	if dir != "" {
		os.RemoveAll(dir)
	}
}
