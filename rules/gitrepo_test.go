package rules

import (
	"os"
	"path/filepath"
	"testing"
)

// TestGitRunsInTheProjectsRepository: a pre-approved git command is
// pre-approved in the project's own repository only. Where git would
// find another (a vendored directory shaped like a bare repository, a
// nested .git, a .git file pointing elsewhere, the git directory itself,
// a repository the script assembles before git runs), it asks: that
// repository's config can name programs git runs.
func TestGitRunsInTheProjectsRepository(t *testing.T) {
	home := "/home/u"
	ws := filepath.Join(hostDir(t), "proj")
	files := map[string]string{
		".git/HEAD":                         "ref: refs/heads/main\n",
		".git/config":                       "[core]\n",
		".git/objects/.keep":                "",
		".git/refs/heads/.keep":             "",
		"src/main.go":                       "package main\n",
		"vendor/lib/HEAD":                   "ref: refs/heads/main\n",
		"vendor/lib/config":                 "[core]\n\tfsmonitor = touch M\n",
		"vendor/lib/objects/.keep":          "",
		"vendor/lib/refs/.keep":             "",
		"vendor/lib/sub/x.go":               "",
		"third/mod/.git/HEAD":               "ref: refs/heads/main\n",
		"third/mod/.git/objects/.keep":      "",
		"third/mod/.git/refs/.keep":         "",
		"linked/.git":                       "gitdir: ../elsewhere\n",
		"elsewhere/HEAD":                    "ref: refs/heads/main\n",
		"elsewhere/objects/.keep":           "",
		"elsewhere/refs/.keep":              "",
		".git/refs/heads/x/HEAD":            "0123456789012345678901234567890123456789\n",
		".git/refs/heads/x/objects/a":       "0123456789012345678901234567890123456789\n",
		".git/refs/heads/x/refs/a":          "0123456789012345678901234567890123456789\n",
		"partial/objects/.keep":             "",
		"partial/refs/.keep":                "",
		"docs/index.md":                     "",
		"nohead/objects/.keep":              "",
		"nohead/refs/.keep":                 "",
		"notes/readme":                      "",
		"gitfile-bad/.git":                  "not a pointer\n",
		"gitfile-bad/x":                     "",
		"partial/README":                    "",
		"third/mod/src/a.go":                "",
		"vendor/lib/refs/heads/.keep":       "",
		"vendor/lib/objects/info/.keep":     "",
		".git/refs/heads/x/objects/b/.keep": "",
	}
	for name, text := range files {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The default's rules, and git -C forms, which the default does not
	// pre-approve.
	cfg := `shell:
  rules:
    - {pattern: "git status", approval: false}
    - {pattern: "git diff", approval: false}
    - {pattern: "git log", approval: false}
    - {pattern: "git -C *", approval: false}
    - {pattern: "cd", approval: false}
    - {pattern: "echo", approval: false}
    - {pattern: "mkdir", approval: false}
    - {pattern: "cp", approval: false}
    - {pattern: "mv", approval: false}
    - {pattern: "shopt", approval: false}
sandbox:
  paths:
    workspace: {root: ., mode: rw, write_approval: false, delete_approval: false}
`
	c, err := Parse(filepath.Join(ws, "git.yaml"), []byte(cfg), ws, Env{Cwd: ws, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(c, home)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		script string
		want   Verdict
		reason string
	}{
		{"git status", Allow, ""},
		{"cd src && git status", Allow, ""},
		{"git -C src log -p", Allow, ""},
		{"cd docs; git diff", Allow, ""},
		{"cd partial && git status", Allow, ""}, // objects/ and refs/, but no HEAD
		{"cd src && git diff > ../out.patch", Allow, ""},
		{"cd vendor/lib && git status", Ask, "shaped like a git repository"},
		{"cd vendor/lib/sub && git log -p", Ask, "shaped like a git repository"},
		{"git -C vendor/lib status", Ask, "shaped like a git repository"},
		{"git -C vendor -C lib diff", Ask, "shaped like a git repository"},
		{"cd third/mod/src && git status", Ask, "the repository at"},
		{"cd linked && git status", Ask, "the repository at"},
		{"cd gitfile-bad && git status", Ask, "a .git file git cannot read"},
		{"cd .git && git status", Ask, "the git directory"},
		{"cd .git/refs/heads/x && git status", Ask, "shaped like a git repository"},
		{"cd /usr && git log", Ask, "outside the project"},
		{"cd \"$D\" && git status", Ask, "not known until run time"},
		{"git -C \"$D\" status", Ask, "not known until run time"},
		// Assembled by the script before git runs.
		{"echo 'ref: refs/heads/m' > partial/HEAD; cd partial && git status", Ask, "shaped like a git repository"},
		{"mkdir -p notes/objects notes/refs && echo 'ref: refs/heads/m' > notes/HEAD && cd notes && git status", Ask, "shaped like a git repository"},
		{"echo x > nohead/HEAD; git -C nohead status", Ask, "shaped like a git repository"},
		{"cp -r /tmp/evil/. notes && cd notes && git status", Ask, "where git looks for a repository"},
		{"mv /tmp/evil made && cd made && git status", Ask, "where git looks for a repository"},
		{"cp -r /tmp/evil notes && cd notes && git status", Allow, ""}, // into notes/evil
		{"echo x > \"$F\"; cd docs && git status", Ask, "not known until run time"},
		{"echo x > docs/notes.md; cd docs && git status", Allow, ""},
		{"echo x > partial/HEAD; git status", Allow, ""}, // git runs at the root, where .git is met first
		// Under lastpipe a pipeline's last command runs in the shell.
		{"shopt -s lastpipe; echo | cd vendor/lib; git status", Ask, "not known until run time"},
		{"echo | cd vendor/lib; git status", Allow, ""},
	} {
		d := e.Script(tc.script, ws)
		if d.Decision != tc.want {
			t.Errorf("%q: %s (%s), want %s", tc.script, d.Decision, d.Reason, tc.want)
			continue
		}
		if tc.reason != "" && !reasonSays(d, tc.reason) {
			t.Errorf("%q: %s, but no reason says %q: %s", tc.script, d.Decision, tc.reason, d.Reason)
		}
	}
}
