package config

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestProjectFileSwappedForFIFO: a command in the workspace swaps
// .guardrun.yaml between a regular file and a FIFO, so that guardrun's
// walk up sees a file and its read opens the FIFO, which waits for a
// writer that never comes: guardrun (and a long-lived guardrun serve,
// one of its threads and the client's descriptors per request) would
// hang. A project file that is not a regular file when read is an
// error, at once.
func TestProjectFileSwappedForFIFO(t *testing.T) {
	root := t.TempDir()
	home, work := filepath.Join(root, "home"), filepath.Join(root, "work")
	for _, d := range []string{home, work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	proj := filepath.Join(work, ProjectFile)
	reg, fifo := filepath.Join(work, "reg"), filepath.Join(work, "fifo")
	put := func() {
		if err := os.WriteFile(reg, []byte(blockMakeForTest), 0o644); err != nil {
			t.Error(err)
		}
		os.Remove(fifo)
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Error(err)
		}
	}
	put()
	if err := os.Rename(reg, proj); err != nil {
		t.Fatal(err)
	}
	stopFlipping := flipping(func() {
		put()
		os.Rename(fifo, proj)
		os.Rename(reg, proj)
	})
	e := &Env{Cwd: work, Home: home, pwHome: home, ConfigHome: filepath.Join(home, ".config"),
		StateDir: filepath.Join(home, ".local", "state", "guardrun"), Getenv: func(string) string { return "" }}
	done := make(chan int)
	go func() {
		n := 0
		for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); n++ {
			Load(Flags{}, e)
		}
		done <- n
	}()
	select {
	case n := <-done:
		t.Logf("%d loads", n)
	case <-time.After(10 * time.Second):
		t.Errorf("a load hangs on a FIFO put in place of the project file")
	}
	stopFlipping()
	// Release a load that hangs: a writer opens the FIFO now in place.
	for i := 0; i < 100; i++ {
		select {
		case <-done:
			return
		default:
		}
		if f, err := os.OpenFile(proj, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
		time.Sleep(10 * time.Millisecond)
	}
}

const blockMakeForTest = "shell:\n  rules:\n    - {pattern: make, allowed: false}\n"

// TestConfigFIFOs: the user config and $GUARDRUN_CONFIG, which may lie
// in an rw zone (they then only tighten), are read without waiting too:
// a FIFO put in their place by a command fails the load at once, with
// the file named, instead of hanging every later guardrun.
func TestConfigFIFOs(t *testing.T) {
	for _, which := range []string{"user config", "GUARDRUN_CONFIG"} {
		t.Run(which, func(t *testing.T) {
			root := t.TempDir()
			home, work := filepath.Join(root, "home"), filepath.Join(root, "work")
			cfgHome := filepath.Join(home, ".config")
			for _, d := range []string{filepath.Join(cfgHome, "guardrun"), work} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			fifo := filepath.Join(cfgHome, "guardrun", "config.yaml")
			env := map[string]string{}
			if which == "GUARDRUN_CONFIG" {
				fifo = filepath.Join(work, "guardrun.yaml")
				env["GUARDRUN_CONFIG"] = fifo
			}
			if err := syscall.Mkfifo(fifo, 0o644); err != nil {
				t.Fatal(err)
			}
			e := &Env{Cwd: work, Home: home, pwHome: home, ConfigHome: cfgHome,
				StateDir: filepath.Join(home, ".local", "state", "guardrun"), Getenv: func(k string) string { return env[k] }}
			done := make(chan error, 1)
			go func() {
				_, err := Load(Flags{}, e)
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), fifo) || !strings.Contains(err.Error(), "not a regular file") {
					t.Errorf("Load with the %s a FIFO: %v, want an error naming %s as not a regular file", which, err, fifo)
				}
			case <-time.After(10 * time.Second):
				t.Errorf("Load hangs on the %s put as a FIFO", which)
				// Release it.
				if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					f.Close()
				}
			}
		})
	}
}

// TestReadRegularRefuses: what a sandboxed command can put where a
// config file is read (a project file, the user config,
// $GUARDRUN_CONFIG): ReadRegular refuses each without waiting and reads
// only a regular file, also through a link.
func TestReadRegularRefuses(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	reg := filepath.Join(dir, "reg.yaml")
	if err := os.WriteFile(reg, []byte("mode: approve-all\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := func(to string) string {
		p := filepath.Join(dir, "l-"+filepath.Base(to))
		if err := os.Symlink(to, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	loop := filepath.Join(dir, "loop")
	os.Symlink(loop, loop)
	rows := []struct {
		name, path, want string
	}{
		{"a FIFO", fifo, "not a regular file"},
		{"a link to a FIFO", link(fifo), "not a regular file"},
		{"a directory", dir, "not a regular file"},
		{"a link to /dev/zero", link("/dev/zero"), "not a regular file"},
		{"/dev/null", "/dev/null", "not a regular file"},
		{"a link loop", loop, "too many levels"},
		{"a link to a regular file", link(reg), ""},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			type res struct {
				data []byte
				err  error
			}
			done := make(chan res, 1)
			go func() {
				data, err := ReadRegular(r.path)
				done <- res{data, err}
			}()
			select {
			case got := <-done:
				if r.want == "" {
					if got.err != nil || !strings.Contains(string(got.data), "approve-all") {
						t.Fatalf("ReadRegular(%s): %q, %v", r.path, got.data, got.err)
					}
					return
				}
				if got.err == nil || !strings.Contains(got.err.Error(), r.want) {
					t.Fatalf("ReadRegular(%s): %v; want an error saying %q", r.path, got.err, r.want)
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("ReadRegular(%s) waited", r.path)
			}
		})
	}
}
