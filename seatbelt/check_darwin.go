package seatbelt

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/guardrun/guardrun/sandbox"
)

// Check reports whether sandbox-exec can run commands here: the program
// exists, accepts a trivial profile, and accepts a profile rendered by this
// package. The last step matters because Seatbelt refuses a whole profile
// when one operation or filter name is unknown to this macOS version, and
// that must surface at startup, not as every command failing.
func Check() error {
	if _, err := os.Stat(sandboxExec); err != nil {
		return fmt.Errorf("seatbelt: %s not found (it ships with macOS): %w", sandboxExec, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := run(ctx, "-p", "(version 1)(allow default)", "--", "/usr/bin/true"); err != nil {
		return fmt.Errorf("seatbelt: sandbox-exec cannot apply a profile: %w", err)
	}
	// Every kind of rule Render can emit, so an unknown name anywhere
	// shows up here. The paths need not exist.
	probe := &sandbox.Profile{
		ReadOnly:     []string{"/bin", "/usr/bin"},
		ReadWrite:    []string{"/private/var/empty/guardrun-check"},
		Deny:         []string{"/private/var/empty/guardrun-check/deny"},
		ReadOnlyOver: []string{"/private/var/empty/guardrun-check/ro"},
		Network:      true,
		PrivateTmp:   true,
	}
	r, err := Render(probe)
	if err != nil {
		return err
	}
	tmp, err := makeTmp()
	if err != nil {
		return err
	}
	defer removeTmp(tmp)
	args, err := r.Args(tmp, []string{"/usr/bin/true"})
	if err != nil {
		return err
	}
	if err := run(ctx, args...); err != nil {
		return fmt.Errorf("seatbelt: this macOS rejects guardrun's generated profile (report it with `sw_vers` output): %w", err)
	}
	return nil
}

func run(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, sandboxExec, args...)
	cmd.Env = []string{}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return fmt.Errorf("%w: %s", err, msg)
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("timed out: %w", err)
		}
		return err
	}
	return nil
}
