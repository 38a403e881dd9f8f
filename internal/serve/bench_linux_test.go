package serve_test

import (
	"io"
	"testing"

	"github.com/guardrun/guardrun/internal/testing/testenv"
	"github.com/guardrun/guardrun/landlock"
)

// benchConfig is integration's BenchmarkBackends config: a user's
// config named by $GUARDRUN_CONFIG with a few rules and the work
// directory as its rw zone.
const benchConfig = `shell:
  program: /bin/bash
  default: {allowed: true, approval: true}
  rules:
    - {pattern: "true", approval: false}
    - {pattern: sleep, approval: false}
    - {pattern: exit, approval: false}
sandbox:
  paths:
    workspace: {root: {work}, mode: rw}
  landlock_accept: [deny_create]
`

// BenchmarkServed times one served `guardrun --approve-all -c true`
// from request to exit status, with the server in this process, so
// that -cpuprofile shows where the server spends each request:
//
//	go test -run '^$' -bench Served -benchtime 200x -cpuprofile cpu.out ./internal/serve
func BenchmarkServed(b *testing.B) {
	b.Run("bwrap", func(b *testing.B) { benchServed(b, "bwrap") })
	b.Run("landlock", func(b *testing.B) {
		if err := landlock.Check(); err != nil {
			testenv.Missing(b, "the landlock backend cannot run here: %v", err)
		}
		benchServed(b, "landlock")
	})
}

func benchServed(b *testing.B, backend string) {
	srv, work, _ := startServerConfig(b, benchConfig)
	one := func() {
		c := dial(b, srv, work, "--backend", backend, "--approve-all", "-c", "true")
		if r := c.reply(b); r != 'R' {
			errOut, _ := io.ReadAll(c.stderr)
			b.Fatalf("reply %q, want R: %s", r, errOut)
		}
		if code := c.exit(b); code != 0 {
			b.Fatalf("exit %d", code)
		}
		c.c.Close()
		c.stdout.Close()
		c.stderr.Close()
	}
	one() // warm up
	b.ResetTimer()
	for range b.N {
		one()
	}
}
