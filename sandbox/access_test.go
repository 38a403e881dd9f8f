package sandbox

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAccess(t *testing.T) {
	p := &Profile{
		ReadOnly:     []string{"/usr", "/app/vendor", "/data"},
		ReadWrite:    []string{"/app", "/app/vendor/patched", "/data"},
		Deny:         []string{"/app/.env", "/app/secret"},
		ReadOnlyOver: []string{"/app/.guardrun.yaml", "/app/cfg"},
		Symlinks:     []Symlink{{"/bin", "/usr/bin"}},
	}
	type rw struct{ R, W bool }
	for _, tc := range []struct {
		path string
		want rw
	}{
		{"/app", rw{true, true}},
		{"/app/src/main.go", rw{true, true}},
		{"/app_backup", rw{false, false}},
		{"/app_backup/x", rw{false, false}},
		{"/ap", rw{false, false}},
		{"/app/.env", rw{false, false}},
		{"/app/.env/x", rw{false, false}},
		{"/app/.envrc", rw{true, true}},
		{"/app/secret/key", rw{false, false}},
		{"/app/x/../secret/key", rw{false, false}},
		{"/app//secret", rw{false, false}},
		{"/app/vendor/lib.go", rw{true, false}},
		{"/app/vendor/patched/x", rw{true, true}},
		{"/app/.guardrun.yaml", rw{true, false}},
		{"/app/cfg/nested/file", rw{true, false}},
		{"/usr/bin/git", rw{true, false}},
		{"/bin/git", rw{true, false}},
		{"/binary", rw{false, false}},
		{"/data/x", rw{true, false}}, // listed both ways: read-only wins
		{"/etc/passwd", rw{false, false}},
		{"relative/path", rw{false, false}},
		{"/", rw{false, false}},
	} {
		r, w := p.Access(tc.path)
		if got := (rw{r, w}); got != tc.want {
			t.Errorf("Access(%q) = %+v, want %+v", tc.path, got, tc.want)
		}
	}
}

func TestIntersect(t *testing.T) {
	p := &Profile{
		ReadOnly:     []string{"/usr", "/etc", "/home/u"},
		ReadWrite:    []string{"/home/u/proj"},
		Deny:         []string{"/home/u/.ssh"},
		ReadOnlyOver: []string{"/home/u/proj/.guardrun.yaml"},
		Network:      true,
		Seccomp:      SeccompPolicy{AllowNetwork: true},
		Cwd:          "/home/u/proj",
		EnvDeny:      []string{"*_TOKEN"},
		Symlinks:     []Symlink{{"/bin", "/usr/bin"}},
	}
	op := &Profile{
		ReadOnly:     []string{"/usr", "/home/u/proj"},
		ReadWrite:    []string{"/home/u/proj/out", "/srv"},
		Deny:         []string{"/home/u/proj/.env"},
		ReadOnlyOver: []string{"/srv/x"},
		PrivateTmp:   true,
		EnvDeny:      []string{"AWS_*"},
	}
	got := Intersect(p, op)
	want := &Profile{
		ReadOnly:     []string{"/home/u/proj", "/usr"},
		ReadWrite:    []string{"/home/u/proj/out"},
		Deny:         []string{"/home/u/.ssh", "/home/u/proj/.env"},
		ReadOnlyOver: []string{"/home/u/proj/.guardrun.yaml"},
		Cwd:          "/home/u/proj",
		PrivateTmp:   true,
		EnvDeny:      []string{"*_TOKEN", "AWS_*"},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("Intersect (-got +want):\n%s", diff)
	}
	if Intersect(nil, nil) != nil {
		t.Error("Intersect(nil, nil) != nil")
	}
	if diff := cmp.Diff(Intersect(p, nil), p); diff != "" {
		t.Errorf("Intersect(p, nil) (-got +want):\n%s", diff)
	}
}
