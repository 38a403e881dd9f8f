//go:build linux

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/guardrun/guardrun/internal/broker"
)

// Codex's apply_patch is applied by guardrun itself, in the hook: these
// tests check what a patch changes on disk, what the audit log holds of
// it and what the model reads back, for patches that try to write more
// than was judged or shown.

// patchAnswer is the hook's answer to one patch.
type patchAnswer struct {
	decision, reason string
	err              error
}

// applyPatchHook runs `guardrun hook codex` on patch, called from cwd
// (the project when ""), and returns its answer; safe in a goroutine.
func applyPatchHook(w *world, cwd, patch string) patchAnswer {
	if cwd == "" {
		cwd = w.work
	}
	in, _ := json.Marshal(map[string]any{
		"session_id": "s1", "cwd": cwd, "hook_event_name": "PreToolUse", "tool_name": "apply_patch",
		"tool_input": map[string]any{"command": patch}, "tool_use_id": "call_1", "turn_id": "t1",
		"permission_mode": "default",
	})
	cmd := exec.Command(guardrunBin, "hook", "codex")
	cmd.Dir, cmd.Env = w.work, w.env
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil {
		return patchAnswer{err: err}
	}
	var ans map[string]any
	if err := json.Unmarshal(out, &ans); err != nil {
		return patchAnswer{err: err}
	}
	d, reason, _ := decision(ans)
	return patchAnswer{decision: d, reason: reason}
}

func patchOf(body ...string) string {
	return "*** Begin Patch\n" + strings.Join(body, "\n") + "\n*** End Patch\n"
}

// approver is a front on guardrun web's broker that answers the
// requests of the patches it runs.
type approver struct {
	t     *testing.T
	front *broker.Front
}

func startApprover(t *testing.T, w *world) *approver {
	t.Helper()
	web := startWebProc(t, w)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	front, err := broker.Attach(ctx, web.socket, "test", web.token)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { front.Close() })
	return &approver{t: t, front: front}
}

// ask runs the patch through the hook and answers what it asks with a,
// after before has run (while the request waits); it returns the
// hook's answer and the requests shown.
func (ap *approver) ask(w *world, patch string, a broker.Answer, before func(broker.Pending)) (patchAnswer, []broker.Pending) {
	ap.t.Helper()
	done := make(chan patchAnswer, 1)
	go func() { done <- applyPatchHook(w, "", patch) }()
	var shown []broker.Pending
	for {
		select {
		case ans := <-done:
			return ans, shown
		case ev := <-ap.front.Events:
			if ev.Pending == nil {
				continue
			}
			shown = append(shown, *ev.Pending)
			if before != nil {
				before(*ev.Pending)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			if err := ap.front.Answer(ctx, ev.Pending.ID, a); err != nil {
				ap.t.Errorf("answering %s: %v", ev.Pending.Display, err)
			}
			cancel()
		case <-time.After(90 * time.Second):
			ap.t.Fatalf("the hook did not answer; requests shown: %+v", shown)
		}
	}
}

// patchWorld is hookWorld with a session (so that "approve for the
// session" is offered) and a runtime directory for guardrun web.
func patchWorld(t *testing.T) *world {
	t.Helper()
	requireSandbox(t)
	w := hookWorld(t)
	rt := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(rt, 0o700); err != nil {
		t.Fatal(err)
	}
	w.env = append(w.env, "XDG_RUNTIME_DIR="+rt, "GUARDRUN_SESSION=patch-session")
	if err := os.MkdirAll(filepath.Join(w.work, ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	return w
}

// A session grant of a patch covers that patch's files: a later patch
// with another file beside one of them asks again.
func TestHookPatchSessionGrantCoversItsFiles(t *testing.T) {
	w := patchWorld(t)
	ap := startApprover(t, w)
	first := patchOf("*** Add File: docs/a.md", "+a", "*** Add File: docs/b.md", "+b")
	ans, shown := ap.ask(w, first, broker.Answer{Approve: true, Session: true}, nil)
	if ans.err != nil || len(shown) != 1 || !strings.Contains(ans.reason, "Success") {
		t.Fatalf("first patch: %+v, %d requests shown", ans, len(shown))
	}
	second := patchOf("*** Add File: docs/a.md", "+a2", "*** Add File: .git/hooks/pre-commit", "+#!/bin/sh", "+touch HOOK-RAN")
	ans, shown = ap.ask(w, second, broker.Answer{Approve: false}, nil)
	hook := filepath.Join(w.work, ".git", "hooks", "pre-commit")
	if fileExists(hook) {
		t.Errorf("the session grant of %q wrote .git/hooks/pre-commit, never shown (answer %+v)", first, ans)
	}
	if len(shown) != 1 {
		t.Errorf("the second patch was shown %d times, want once", len(shown))
	}
	// The grant still covers its own files.
	ans, shown = ap.ask(w, first, broker.Answer{Approve: false}, nil)
	if len(shown) != 0 || !strings.Contains(ans.reason, "Success") {
		t.Errorf("the first patch again: %+v, %d requests shown; want it applied on the session grant", ans, len(shown))
	}
}

// An approval covers the patch as the person saw it: what changes on
// disk while the request waits (a command left running in the sandbox
// can) is not written on the strength of it.
func TestHookPatchApprovalCoversWhatWasShown(t *testing.T) {
	tests := []struct {
		name  string
		setup func(w *world)
		patch string
		// meanwhile runs while the request waits.
		meanwhile func(w *world)
		// harmed says what landed that the person did not see ("" none),
		// or, for the patch the person saw, what did not land.
		harmed func(w *world) string
		// applied says the patch is applied as shown.
		applied bool
	}{
		{
			"a move nothing changed while shown",
			func(w *world) { writeFile(t, filepath.Join(w.work, "notes.txt"), "harmless\n") },
			patchOf("*** Update File: notes.txt", "*** Move to: docs/notes.md", "@@", "-harmless", "+moved"),
			func(w *world) {},
			func(w *world) string {
				if b, _ := os.ReadFile(filepath.Join(w.work, "docs", "notes.md")); string(b) != "moved\n" || fileExists(filepath.Join(w.work, "notes.txt")) {
					return "the move was not made: docs/notes.md holds " + string(b)
				}
				return ""
			},
			true,
		},
		{
			"a moved file's content changed while shown",
			func(w *world) { writeFile(t, filepath.Join(w.work, "notes.txt"), "harmless\n") },
			patchOf("*** Update File: notes.txt", "*** Move to: docs/notes.md"),
			func(w *world) { writeFile(t, filepath.Join(w.work, "notes.txt"), "EVIL\n") },
			func(w *world) string {
				if b, _ := os.ReadFile(filepath.Join(w.work, "docs", "notes.md")); strings.Contains(string(b), "EVIL") {
					return "docs/notes.md holds " + string(b)
				}
				return ""
			},
			false,
		},
		{
			"an updated file's content changed while shown",
			func(w *world) { writeFile(t, filepath.Join(w.work, "docs", "a.md"), "one\ntwo\n") },
			patchOf("*** Update File: docs/a.md", "@@", " one", "-two", "+2"),
			func(w *world) { writeFile(t, filepath.Join(w.work, "docs", "a.md"), "EVIL\none\ntwo\n") },
			func(w *world) string {
				if b, _ := os.ReadFile(filepath.Join(w.work, "docs", "a.md")); strings.Contains(string(b), "EVIL") && strings.Contains(string(b), "2") {
					return "docs/a.md holds " + string(b)
				}
				return ""
			},
			false,
		},
		{
			"a link on an allowed path swapped onto .codex while shown",
			func(w *world) {
				os.MkdirAll(filepath.Join(w.work, "real"), 0o755)
				os.MkdirAll(filepath.Join(w.work, ".codex"), 0o755)
				os.Symlink("real", filepath.Join(w.work, "d"))
			},
			patchOf("*** Add File: docs/a.md", "+a", "*** Add File: d/config.toml", "+[hooks]"),
			func(w *world) { swapLink(t, filepath.Join(w.work, "d"), ".codex") },
			func(w *world) string {
				if fileExists(filepath.Join(w.work, ".codex", "config.toml")) {
					return ".codex/config.toml was written"
				}
				return ""
			},
			false,
		},
		{
			"a link on an allowed path swapped onto .git/hooks while shown",
			func(w *world) {
				os.MkdirAll(filepath.Join(w.work, "real"), 0o755)
				os.Symlink("real", filepath.Join(w.work, "d"))
			},
			patchOf("*** Add File: docs/a.md", "+a", "*** Add File: d/pre-commit", "+#!/bin/sh"),
			func(w *world) { swapLink(t, filepath.Join(w.work, "d"), ".git/hooks") },
			func(w *world) string {
				if fileExists(filepath.Join(w.work, ".git", "hooks", "pre-commit")) {
					return ".git/hooks/pre-commit was written"
				}
				return ""
			},
			false,
		},
		{
			"a link on an allowed path swapped outside every zone while shown",
			func(w *world) {
				os.MkdirAll(filepath.Join(w.work, "real"), 0o755)
				os.MkdirAll(filepath.Join(w.tmp, "outside"), 0o755)
				os.Symlink("real", filepath.Join(w.work, "d"))
			},
			patchOf("*** Add File: docs/a.md", "+a", "*** Add File: d/f", "+x"),
			func(w *world) { swapLink(t, filepath.Join(w.work, "d"), filepath.Join(w.tmp, "outside")) },
			func(w *world) string {
				if fileExists(filepath.Join(w.tmp, "outside", "f")) {
					return "outside/f was written"
				}
				return ""
			},
			false,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := patchWorld(t)
			tt.setup(w)
			ap := startApprover(t, w)
			ans, shown := ap.ask(w, tt.patch, broker.Answer{Approve: true}, func(broker.Pending) { tt.meanwhile(w) })
			if ans.err != nil || len(shown) == 0 {
				t.Fatalf("answer %+v, %d requests shown", ans, len(shown))
			}
			t.Logf("the model read %q", ans.reason)
			if h := tt.harmed(w); h != "" {
				t.Errorf("%s, which the person did not see (the model read %q)", h, ans.reason)
			}
			if strings.Contains(ans.reason, "Success") != tt.applied {
				t.Errorf("the model read %q; want it told the patch was applied: %v", ans.reason, tt.applied)
			}
			if tt.applied {
				for _, rec := range auditRecords(t, w) {
					if rec["outcome"] == "ran" && rec["decided_by"] != "person" && rec["verdict"] == "ask" {
						t.Errorf("audit: %s %s ran, decided by %v", rec["op"], rec["path"], rec["decided_by"])
					}
				}
			}
		})
	}
}

// swapLink replaces the link at path with one to target, atomically.
func swapLink(t *testing.T, path, target string) {
	t.Helper()
	tmp := path + ".new"
	if err := os.Symlink(target, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestHookPatchChangesWhatItSays: what a patch changes on disk, what the
// audit log holds of it and what the model reads back.
func TestHookPatchChangesWhatItSays(t *testing.T) {
	tests := []struct {
		name string
		// mode replaces the config's interactive mode ("" keeps it).
		mode  string
		setup func(t *testing.T, w *world)
		patch string
		// files are the project's files after the patch ("" absent).
		files map[string]string
		// reason is a part of what the model reads.
		reason string
		// audit are the audit records' "op outcome" for the patch.
		audit []string
	}{
		{
			"a move to its own path updates the file",
			"approve-all",
			func(t *testing.T, w *world) { writeFile(t, filepath.Join(w.work, "a.txt"), "x\n") },
			patchOf("*** Update File: a.txt", "*** Move to: ./a.txt", "@@", "-x", "+y"),
			map[string]string{"a.txt": "y\n"},
			"Success. Updated the following files:\nM a.txt",
			[]string{"edit ran"},
		},
		{
			"a second file that fails leaves the first changed and says so",
			"",
			func(t *testing.T, w *world) { writeFile(t, filepath.Join(w.work, "a.txt"), "x\n") },
			patchOf("*** Add File: first.txt", "+1", "*** Update File: a.txt", "@@", "-nomatch", "+y", "*** Add File: third.txt", "+3"),
			map[string]string{"first.txt": "1\n", "a.txt": "x\n", "third.txt": ""},
			"up to an error: " + "WORK/a.txt: the lines the change replaces are not in the file: \"nomatch\"\nChanged before the error:\nA first.txt",
			[]string{"write ran", "edit failed"},
		},
		{
			"a second file outside every zone refuses the whole patch",
			"",
			nil,
			patchOf("*** Add File: first.txt", "+1", "*** Add File: ../escape.txt", "+2"),
			map[string]string{"first.txt": "", "../escape.txt": ""},
			"guardrun: blocked: write ",
			[]string{"write refused", "write refused"},
		},
		{
			"an update through a hard link to a file outside every zone leaves that file",
			"",
			func(t *testing.T, w *world) {
				writeFile(t, filepath.Join(w.tmp, "ro.txt"), "old\n")
				if err := os.Link(filepath.Join(w.tmp, "ro.txt"), filepath.Join(w.work, "hard.txt")); err != nil {
					t.Skip("no hard link across the directories:", err)
				}
			},
			patchOf("*** Update File: hard.txt", "@@", "-old", "+new"),
			map[string]string{"hard.txt": "new\n", "../tmp/ro.txt": "old\n"},
			"Success",
			[]string{"edit ran"},
		},
		{
			"a link is not deleted and neither is what it points to",
			"approve-all",
			func(t *testing.T, w *world) {
				writeFile(t, filepath.Join(w.work, "t.txt"), "t\n")
				os.Symlink("t.txt", filepath.Join(w.work, "l"))
			},
			patchOf("*** Delete File: l"),
			map[string]string{"t.txt": "t\n"},
			"is a symbolic link",
			[]string{"rm failed"},
		},
		{
			"a file added over a link to a project file replaces that file",
			"",
			func(t *testing.T, w *world) {
				writeFile(t, filepath.Join(w.work, "t.txt"), "t\n")
				os.Symlink("t.txt", filepath.Join(w.work, "l"))
			},
			patchOf("*** Add File: l", "+new"),
			map[string]string{"t.txt": "new\n"},
			"Success",
			[]string{"write ran"},
		},
		{
			"a move onto an existing file changes neither",
			"approve-all",
			func(t *testing.T, w *world) {
				writeFile(t, filepath.Join(w.work, "a.txt"), "x\n")
				writeFile(t, filepath.Join(w.work, "b.txt"), "keep\n")
			},
			patchOf("*** Update File: a.txt", "*** Move to: b.txt", "@@", "-x", "+y"),
			map[string]string{"a.txt": "x\n", "b.txt": "keep\n"},
			"b.txt exists already\nNothing was changed.",
			[]string{"edit failed"},
		},
		{
			"Codex's settings are refused under another case",
			"approve-all",
			nil,
			patchOf("*** Add File: .CoDeX/config.toml", "+x"),
			map[string]string{".CoDeX/config.toml": ""},
			".codex holds Codex's config and hooks",
			[]string{"write refused"},
		},
		{
			"Codex's settings are refused through a link",
			"approve-all",
			func(t *testing.T, w *world) {
				os.MkdirAll(filepath.Join(w.work, ".codex"), 0o755)
				os.Symlink(".codex", filepath.Join(w.work, "cx"))
			},
			patchOf("*** Add File: cx/config.toml", "+x"),
			map[string]string{".codex/config.toml": ""},
			".codex holds Codex's config and hooks",
			[]string{"write refused"},
		},
		{
			"a move out of Codex's settings is refused",
			"approve-all",
			func(t *testing.T, w *world) { writeFile(t, filepath.Join(w.work, ".codex", "config.toml"), "x\n") },
			patchOf("*** Update File: .codex/config.toml", "*** Move to: moved.toml"),
			map[string]string{".codex/config.toml": "x\n", "moved.toml": ""},
			".codex holds Codex's config and hooks",
			[]string{"read refused", "write refused", "rm refused"},
		},
		{
			"guardrun's project config is refused",
			"approve-all",
			nil,
			patchOf("*** Add File: .guardrun.yaml", "+mode: approve-all"),
			map[string]string{".guardrun.yaml": ""},
			"guardrun's own config and state",
			[]string{"write refused"},
		},
		{
			"a path through /proc/self/cwd is refused",
			"approve-all",
			nil,
			patchOf("*** Add File: /proc/self/cwd/x.txt", "+x"),
			map[string]string{"x.txt": ""},
			"to what the agent's own process has there",
			[]string{"write refused"},
		},
		{
			"a protected file in interactive mode with nobody to ask is refused",
			"",
			nil,
			patchOf("*** Add File: .git/hooks/pre-commit", "+#!/bin/sh"),
			map[string]string{".git/hooks/pre-commit": ""},
			"needs approval",
			[]string{"write refused"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requireSandbox(t)
			w := hookWorld(t)
			os.MkdirAll(filepath.Join(w.work, ".git", "hooks"), 0o755)
			if tt.mode != "" {
				cfg := filepath.Join(filepath.Dir(w.work), "agents.yaml")
				b, err := os.ReadFile(cfg)
				if err != nil {
					t.Fatal(err)
				}
				writeFile(t, cfg, strings.Replace(string(b), "mode: interactive", "mode: "+tt.mode, 1))
			}
			if tt.setup != nil {
				tt.setup(t, w)
			}
			ans := applyPatchHook(w, "", tt.patch)
			if ans.err != nil {
				t.Fatal(ans.err)
			}
			if want := strings.ReplaceAll(tt.reason, "WORK", w.work); ans.decision != "deny" || !strings.Contains(ans.reason, want) {
				t.Errorf("the model read %s %q, want a denial with %q", ans.decision, ans.reason, want)
			}
			for name, want := range tt.files {
				b, err := os.ReadFile(filepath.Join(w.work, name))
				if got := string(b); (err != nil) != (want == "") || got != want {
					t.Errorf("%s holds %q (%v), want %q", name, got, err, want)
				}
			}
			var got []string
			for _, rec := range auditRecords(t, w) {
				if rec["via"] == "codex" && rec["op"] != nil {
					got = append(got, fmt.Sprintf("%s %s", rec["op"], rec["outcome"]))
				}
			}
			if diff := cmp.Diff(got, tt.audit); diff != "" {
				t.Errorf("audit (-got +want):\n%s", diff)
			}
		})
	}
}
