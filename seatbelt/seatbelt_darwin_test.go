package seatbelt

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guardrun/guardrun/sandbox"

	"github.com/guardrun/guardrun/internal/testing/testenv"
)

// These tests need a Mac. Every forbidden operation runs inside
// sandbox-exec, after the script has printed a marker: if the sandbox did
// not come up, there is no marker and the test fails; the attempt never
// runs on the host.

const up = "SANDBOX_UP"

// requireSandbox skips when sandbox-exec is unusable, unless CI demands it.
func requireSandbox(t *testing.T) {
	t.Helper()
	if err := Check(); err != nil {
		testenv.Missing(t, "sandbox-exec unusable here: %v", err)
	}
}

// macSystem is what Derive should expose read-only on macOS for everyday
// tools; the renderer adds only dyld's and libc's own files.
var macSystem = []string{
	"/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/libexec", "/usr/share",
	"/usr/local", "/opt/homebrew", "/etc", "/private/var/select",
	"/private/var/db/xcode_select_link", "/Library/Developer/CommandLineTools",
	"/Applications/Xcode.app", "/System/Library",
}

type fixture struct {
	proj, secret, config, outside string
	p                             *sandbox.Profile
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{
		proj:    filepath.Join(root, "proj"),
		outside: filepath.Join(root, "outside"),
	}
	f.secret = filepath.Join(f.proj, "sub", "secret")
	f.config = filepath.Join(f.proj, ".guardrun.yaml")
	for _, d := range []string{filepath.Join(f.proj, "sub"), f.outside, filepath.Join(f.proj, "home")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, file := range []string{f.secret, f.config, filepath.Join(f.outside, "file")} {
		if err := os.WriteFile(file, []byte("content\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f.p = &sandbox.Profile{
		ReadOnly:     macSystem,
		ReadWrite:    []string{f.proj},
		Deny:         []string{f.secret},
		ReadOnlyOver: []string{f.config},
		Cwd:          f.proj,
		Home:         filepath.Join(f.proj, "home"),
		PrivateTmp:   true,
		EnvDeny:      []string{"GUARDRUN_TEST_SECRET*"},
	}
	return f
}

func sandboxed(t *testing.T, p *sandbox.Profile, script string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	env := append(os.Environ(), "GUARDRUN_TEST_SECRET=leaked")
	argv := append([]string{"/bin/sh", "-c", script, "sh"}, args...)
	cmd, err := Command(ctx, p, argv, env)
	if err != nil {
		t.Fatal(err)
	}
	defer Cleanup(cmd)
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// mustBlock runs attempt (a shell condition) in the sandbox and requires it
// to fail there.
func mustBlock(t *testing.T, p *sandbox.Profile, name, attempt string, args ...string) {
	t.Helper()
	out := sandboxed(t, p, "echo "+up+"; if "+attempt+"; then echo ESCAPED; else echo BLOCKED; fi", args...)
	if !strings.Contains(out, up) {
		t.Fatalf("%s: sandbox did not start:\n%s", name, out)
	}
	if strings.Contains(out, "ESCAPED") || !strings.Contains(out, "BLOCKED") {
		t.Errorf("%s: not blocked:\n%s", name, out)
	}
}

func mustWork(t *testing.T, p *sandbox.Profile, name, script, want string, args ...string) {
	t.Helper()
	out := sandboxed(t, p, script, args...)
	if !strings.Contains(out, want) {
		t.Errorf("%s: want %q in output:\n%s", name, want, out)
	}
}

func TestDarwinAllowed(t *testing.T) {
	requireSandbox(t)
	f := newFixture(t)
	mustWork(t, f.p, "write in zone", `echo hi > "$1/new" && cat "$1/new"`, "hi", f.proj)
	mustWork(t, f.p, "private tmp", `echo t > "$TMPDIR/x" && cat "$TMPDIR/x"`, "t")
	mustWork(t, f.p, "cwd", `pwd`, f.proj)
	mustWork(t, f.p, "devices", `echo x > /dev/null && head -c1 /dev/urandom | wc -c`, "1")
	mustWork(t, f.p, "env filtered", `echo "[${GUARDRUN_TEST_SECRET-unset}]"`, "[unset]")
}

func TestDarwinTools(t *testing.T) {
	requireSandbox(t)
	f := newFixture(t)
	mustWork(t, f.p, "git", `git init -q repo && cd repo && git -c user.name=a -c user.email=a@b commit -q --allow-empty -m m && git log --oneline | wc -l`, "1")
	if err := os.WriteFile(filepath.Join(f.proj, "Makefile"), []byte("all:\n\t@echo made\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustWork(t, f.p, "make", `make`, "made")
	if exec.Command("xcrun", "--find", "clang").Run() == nil {
		if err := os.WriteFile(filepath.Join(f.proj, "hello.c"), []byte("#include <stdio.h>\nint main(void){puts(\"compiled\");return 0;}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		mustWork(t, f.p, "clang", `cc -o hello hello.c && ./hello`, "compiled")
	} else if testenv.Required() {
		t.Error("no command line tools (xcrun --find clang): clang not checked (GUARDRUN_REQUIRE_SANDBOX=1)")
	} else {
		t.Log("no command line tools: clang not checked")
	}
	if _, err := exec.LookPath("python3"); err != nil && testenv.Required() {
		t.Error("no python3: python3 not checked (GUARDRUN_REQUIRE_SANDBOX=1)")
	} else if err == nil {
		mustWork(t, f.p, "python3", `python3 -c 'import multiprocessing as m, tempfile, pwd, os
print(m.Pool(2).map(abs, [-1, -2]), tempfile.mkdtemp() != "", pwd.getpwuid(os.getuid()).pw_name != "")'`, "[1, 2] True True")
	}
}

func TestDarwinDenied(t *testing.T) {
	requireSandbox(t)
	f := newFixture(t)
	mustBlock(t, f.p, "read denied", `cat "$1"`, f.secret)
	mustBlock(t, f.p, "stat denied", `ls -l "$1"`, f.secret)
	mustBlock(t, f.p, "write denied", `echo x > "$1"`, f.secret)
	mustBlock(t, f.p, "hard link of denied", `ln "$1" "$2/link" && cat "$2/link"`, f.secret, f.proj)
	mustBlock(t, f.p, "rename ancestor of denied", `mv "$1/sub" "$1/moved"`, f.proj)
	mustBlock(t, f.p, "write read-only overlay", `echo x >> "$1"`, f.config)
	mustBlock(t, f.p, "replace read-only overlay", `rm -f "$1"`, f.config)
	mustBlock(t, f.p, "rename read-only overlay", `mv "$1" "$1.bak"`, f.config)
	mustBlock(t, f.p, "read outside", `cat "$1/file"`, f.outside)
	mustBlock(t, f.p, "write outside", `echo x > "$1/new"`, f.outside)
	mustBlock(t, f.p, "write host /tmp", `echo x > /private/tmp/guardrun-escape-$$`)
	mustBlock(t, f.p, "read home", `ls "$1"`, os.Getenv("HOME"))
	if _, err := exec.LookPath("python3"); err != nil && testenv.Required() {
		t.Error("no python3: socket and TIOCSTI not checked (GUARDRUN_REQUIRE_SANDBOX=1)")
	} else if err == nil {
		mustBlock(t, f.p, "ip socket without network", `python3 -c 'import socket; socket.socket()' 2>/dev/null`)
		mustBlock(t, f.p, "TIOCSTI", `python3 -c 'import fcntl, termios; fcntl.ioctl(open("/dev/tty"), termios.TIOCSTI, b"x")' 2>/dev/null`)
		on := *f.p
		on.Network = true
		mustWork(t, &on, "ip socket with network", `python3 -c 'import socket; socket.socket(); print("socket ok")'`, "socket ok")
	}
}

// TestDarwinAliases checks that /tmp and /var spellings in a profile reach
// the files the kernel reports under /private.
func TestDarwinAliases(t *testing.T) {
	requireSandbox(t)
	dir, err := os.MkdirTemp("/tmp", "guardrun-alias-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &sandbox.Profile{ReadOnly: macSystem, ReadWrite: []string{dir}, Deny: []string{secret}, Cwd: "/"}
	mustWork(t, p, "write via /tmp spelling", `echo a > "$1/f" && cat "$1/f"`, "a", dir)
	mustBlock(t, p, "denied via /tmp spelling", `cat "$1"`, secret)
	mustBlock(t, p, "denied via /private spelling", `cat "$1"`, "/private"+secret)
}
