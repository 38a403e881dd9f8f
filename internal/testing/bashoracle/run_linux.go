package bashoracle

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/guardrun/guardrun/bwrap"
	"github.com/guardrun/guardrun/sandbox"
	"github.com/guardrun/guardrun/seccomp"
)

// StandIns are the programs replaced on the sandbox's PATH by a script
// that does nothing: what an attack would run, so that a run that slips
// through is seen in the trace and harms nothing.
var StandIns = []string{
	"rm", "curl", "wget", "touch", "mv", "cp", "chmod", "chown", "dd", "nc", "ncat",
	"python3", "python", "perl", "ruby", "node", "ssh", "scp", "sudo", "doas", "su",
	"mkfifo", "ln", "install", "shred", "truncate", "kill", "pkill", "reboot",
	"make", "npm", "pip", "docker", "id", "whoami", "x", "p", "y", "evil",
}

// Oracle runs scripts in the sandbox under strace.
type Oracle struct {
	base   string // host directory holding the stand-ins and each run's world
	stubs  string
	home   string
	strace string
	// template is a .git directory copied into each workspace.
	template string
	// Timeout bounds one run, the sandbox's start included (which takes
	// seconds on a loaded machine under strace).
	Timeout time.Duration
}

// New prepares an oracle in dir (created if needed). It fails when the
// sandbox or strace is not available: the oracle never runs a script
// outside the sandbox.
func New(dir string) (*Oracle, error) {
	if err := bwrap.Check(); err != nil {
		return nil, fmt.Errorf("the sandbox is not available: %w", err)
	}
	if err := seccomp.Supported(); err != nil {
		return nil, fmt.Errorf("the sandbox is not available: %w", err)
	}
	st, err := exec.LookPath("strace")
	if err != nil {
		return nil, errors.New("strace is not installed (apt-get install strace)")
	}
	o := &Oracle{base: dir, stubs: filepath.Join(dir, "stubs"), home: filepath.Join(dir, "home"), strace: st, Timeout: 20 * time.Second}
	for _, d := range []string{o.stubs, o.home, o.decideDir()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	for _, n := range StandIns {
		if err := os.WriteFile(filepath.Join(o.stubs, n), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(o.home, ".bashrc"), []byte("# the user's bashrc\n"), 0o644); err != nil {
		return nil, err
	}
	// The repository every run starts from: made once by git init, a
	// fixed command that runs no script.
	if git, err := exec.LookPath("git"); err == nil {
		repo := filepath.Join(dir, "repo")
		if out, err := exec.Command(git, "init", "-q", repo).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("git init: %v: %s", err, out)
		}
		o.template = filepath.Join(repo, ".git")
	}
	return o, nil
}

// Result is one traced run.
type Result struct {
	Trace  *Trace
	Status int
	Output string
	// Workspace is the run's working directory (gone after Run).
	Workspace string
}

// Run runs script with shell (an absolute path, /bin/bash or /bin/dash)
// as `shell -c script` in a fresh workspace inside the sandbox, traced.
func (o *Oracle) Run(shell, script string) (*Result, error) {
	ws, err := os.MkdirTemp(o.base, "ws-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(ws)
	os.MkdirAll(filepath.Join(ws, "src"), 0o755)
	os.WriteFile(filepath.Join(ws, "file.txt"), []byte("data\n"), 0o644)
	// A repository, so that git status and its relatives do their work
	// (and run what a repository's configuration asks them to).
	if o.template != "" {
		if err := copyTree(o.template, filepath.Join(ws, ".git")); err != nil {
			return nil, err
		}
	}
	p, err := sandbox.Derive(sandbox.Spec{
		Zones: []sandbox.Zone{
			{Name: "ws", Root: ws, Writable: true},
			{Name: "home", Root: o.home},
			{Name: "stubs", Root: o.stubs},
		},
		SystemRead: sandbox.DefaultSystemPaths,
		Cwd:        ws,
		Home:       o.home,
	})
	if err != nil {
		return nil, err
	}
	env := []string{"PATH=" + o.stubs + ":/usr/bin:/bin", "LANG=C.UTF-8", "HOME=" + o.home}
	ctx, cancel := context.WithTimeout(context.Background(), o.Timeout)
	defer cancel()
	c, err := bwrap.Command(ctx, p, []string{shell, "-c", script}, env, bwrap.Config{})
	if err != nil {
		return nil, err
	}
	log := filepath.Join(ws + ".trace")
	defer os.Remove(log)
	// strace runs outside and traces bwrap and everything under it: the
	// seccomp filter refuses ptrace inside the sandbox.
	args := append([]string{o.strace, "-f", "--pidns-translation", "-qq", "-xx", "-s", "4096", "-e", "signal=none",
		"-e", "trace=execve,execveat,openat,open,creat,clone,clone3,fork,vfork,chdir,unlink,unlinkat,rename,renameat,renameat2,mkdir,mkdirat,truncate,link,linkat,symlink,symlinkat",
		"-o", log, "--", c.Cmd.Path}, c.Cmd.Args[1:]...)
	c.Cmd.Path, c.Cmd.Args = o.strace, args
	var out bytes.Buffer
	c.Cmd.Stdout, c.Cmd.Stderr = &out, &out
	c.Cmd.Stdin = nil
	if err := c.Start(); err != nil {
		return nil, fmt.Errorf("sandbox did not start: %w", err)
	}
	status, err := c.Wait()
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w (output: %.300s)", err, out.String())
	}
	f, err := os.Open(log)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t := parseTrace(f, shell, ws)
	if !t.Started {
		return nil, fmt.Errorf("the trace does not show %s starting in the sandbox (status %d, output: %.300s)", shell, status, out.String())
	}
	o2 := out.String()
	if len(o2) > 4096 {
		o2 = o2[:4096]
	}
	return &Result{Trace: t, Status: status, Output: o2, Workspace: ws}, nil
}

func (o *Oracle) decideDir() string { return filepath.Join(o.base, "decide") }
func (o *Oracle) homeDir() string   { return o.home }

// copyTree copies the regular files and directories under src to dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		t := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(t, 0o755)
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			return os.WriteFile(t, b, info.Mode().Perm())
		}
		return nil
	})
}
