package config_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/guardrun/guardrun/internal/config"
)

// BenchmarkLoad is one config load as `guardrun serve` makes it for
// each request in integration's benchmark world: the state and config
// homes chosen by XDG_*, $GUARDRUN_CONFIG naming a config outside the
// work directory, no project file (plain), or an untrusted one in the
// working directory (project).
func BenchmarkLoad(b *testing.B) {
	for _, project := range []bool{false, true} {
		name := "plain"
		if project {
			name = "project"
		}
		b.Run(name, func(b *testing.B) {
			root := b.TempDir()
			home, work := filepath.Join(root, "home"), filepath.Join(root, "work", "repo", "sub")
			for _, d := range []string{home, work} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					b.Fatal(err)
				}
			}
			cfg := filepath.Join(root, "guardrun.yaml")
			text := "shell:\n  program: /bin/bash\n  default: {allowed: true, approval: true}\n  rules:\n" +
				"    - {pattern: \"true\", approval: false}\n    - {pattern: sleep, approval: false}\n" +
				"sandbox:\n  paths:\n    workspace: {root: " + filepath.Join(root, "work") + ", mode: rw}\n"
			if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
				b.Fatal(err)
			}
			if project {
				p := filepath.Join(work, ".guardrun.yaml")
				if err := os.WriteFile(p, []byte("shell:\n  rules:\n    - {pattern: make, allowed: false}\n"), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			b.Setenv("HOME", home)
			b.Setenv("XDG_STATE_HOME", filepath.Join(home, ".local", "state"))
			b.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
			b.Setenv("GUARDRUN_CONFIG", cfg)
			b.Chdir(work)
			e, err := config.NewEnv()
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				if _, err := config.Load(config.Flags{Mode: "approve-all"}, e); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
