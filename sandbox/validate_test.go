package sandbox

import (
	"strings"
	"testing"
)

// good is a profile every check accepts.
func good() *Profile {
	return &Profile{
		ReadOnly:     []string{"/usr", "/etc", "/home/u"},
		ReadWrite:    []string{"/home/u/proj"},
		Deny:         []string{"/home/u/.ssh", "/home/u/proj/.env"},
		ReadOnlyOver: []string{"/home/u/proj/.guardrun.yaml"},
		Protected:    []string{"/home/u/proj/.guardrun.yaml", "/home/u/.local/state/guardrun"},
		Symlinks:     []Symlink{{"/bin", "/usr/bin"}},
		Cwd:          "/home/u/proj",
		Home:         "/home/u",
		PrivateTmp:   true,
		EnvDeny:      []string{"*_TOKEN"},
	}
}

func TestChecksAcceptGood(t *testing.T) {
	for _, c := range checks {
		if err := c.fn(good()); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	if err := good().Validate(); err != nil {
		t.Error(err)
	}
}

// Each row breaks one rule; exactly that check must fail.
func TestChecksAlone(t *testing.T) {
	for _, tc := range []struct {
		check string
		edit  func(*Profile)
		want  string
	}{
		{"clean-paths", func(p *Profile) { p.ReadWrite = append(p.ReadWrite, "/tmp/../etc") }, "not an absolute clean path"},
		{"clean-paths", func(p *Profile) { p.Deny = append(p.Deny, "relative/.env") }, "not an absolute clean path"},
		{"clean-paths", func(p *Profile) { p.ReadOnly = append(p.ReadOnly, "/opt/") }, "not an absolute clean path"},
		{"clean-paths", func(p *Profile) { p.Cwd = "/home/u//proj" }, "cwd"},
		{"clean-paths", func(p *Profile) { p.Symlinks[0].Target = "usr/bin" }, "symlink"},
		{"clean-paths", func(p *Profile) { p.ReadOnly = append(p.ReadOnly, "/a\x00b") }, "not an absolute clean path"},
		{"root-not-writable", func(p *Profile) { p.ReadWrite = append(p.ReadWrite, "/"); p.Symlinks = nil }, "/ is writable"},
		{"no-kernel-fs", func(p *Profile) { p.ReadOnly = append(p.ReadOnly, "/proc/1") }, "/proc"},
		{"no-kernel-fs", func(p *Profile) { p.ReadWrite = append(p.ReadWrite, "/dev/shm") }, "/dev"},
		{"no-kernel-fs", func(p *Profile) { p.ReadOnly = append(p.ReadOnly, "/sys") }, "/sys"},
		{"no-ro-rw-conflict", func(p *Profile) { p.ReadOnly = append(p.ReadOnly, "/home/u/proj") }, "both"},
		{"deny-not-root", func(p *Profile) { p.Deny = append(p.Deny, "/"); p.Symlinks, p.Cwd = nil, "" }, "nothing could run"},
		{"read-only-over-exposed", func(p *Profile) { p.ReadOnlyOver = append(p.ReadOnlyOver, "/root/.bashrc") }, "not inside an exposed tree"},
		{"protected-not-writable", func(p *Profile) { p.ReadOnlyOver = nil }, "would be writable"},
		{"protected-not-writable", func(p *Profile) { p.Protected = append(p.Protected, "/home/u/proj/x/cfg") }, "would be writable"},
		{"protected-not-writable", func(p *Profile) { p.Protected = append(p.Protected, "/home/u") }, "inside protected path"},
		{"cwd-visible", func(p *Profile) { p.Cwd = "/srv" }, "not visible"},
		{"cwd-visible", func(p *Profile) { p.Cwd = "/home/u/.ssh" }, "not visible"},
		{"symlinks", func(p *Profile) { p.Symlinks = append(p.Symlinks, Symlink{"/usr/lib64", "/usr/lib"}) }, "overlaps"},
		{"symlinks", func(p *Profile) { p.Symlinks = append(p.Symlinks, Symlink{"/sbin", "/bin/x"}) }, "leads through"},
		{"network-consistent", func(p *Profile) { p.Seccomp.AllowNetwork = true }, "no network"},
		{"network-consistent", func(p *Profile) {
			p.Proxy = true
			p.Seccomp = SeccompPolicy{AllowNetwork: true, AllowUnix: true}
			p.UnixSockets = []string{"/home/u/proj/d.sock"}
		}, "unix sockets refused"},
		{"network-consistent", func(p *Profile) {
			p.Proxy, p.Network = true, true
			p.Seccomp = SeccompPolicy{AllowNetwork: true}
		}, "both the network and the proxy"},
		{"env-deny-patterns", func(p *Profile) { p.EnvDeny = append(p.EnvDeny, "[") }, "syntax error"},
		{"pinned-writable", func(p *Profile) { p.Pinned = append(p.Pinned, "/usr/lib") }, "not writable"},
		{"unix-sockets", func(p *Profile) { p.Seccomp.AllowUnix = true }, "exactly when"},
	} {
		t.Run(tc.check, func(t *testing.T) {
			p := good()
			tc.edit(p)
			for _, c := range checks {
				err := c.fn(p)
				if c.name == tc.check {
					if err == nil || !strings.Contains(err.Error(), tc.want) {
						t.Errorf("%s: err = %v, want one containing %q", c.name, err, tc.want)
					}
				} else if err != nil && !(tc.check == "clean-paths") {
					// A malformed path may upset other checks too; any
					// other edit must be caught by its own check only.
					t.Errorf("%s also failed: %v", c.name, err)
				}
			}
			if err := p.Validate(); err == nil || !strings.Contains(err.Error(), tc.check) {
				t.Errorf("Validate() = %v, want it to name %s", err, tc.check)
			}
		})
	}
}

func TestValidateNil(t *testing.T) {
	var p *Profile
	if err := p.Validate(); err == nil {
		t.Error("nil profile: want an error")
	}
}
