package rules

import (
	"bytes"
	"reflect"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// TestDefaultParsedAgain: the embedded default parsed again in the same
// process (its document and pattern words remembered) is the config a
// first parse gives, for each environment.
func TestDefaultParsedAgain(t *testing.T) {
	envs := []Env{
		{Cwd: "/w", Home: "/h", StateDir: "/h/.local/state/guardrun"},
		{Cwd: "/w", Home: "/other", StateDir: "/s"},
		{Cwd: "/x/y", Home: "/h"},
	}
	for round := range 2 {
		for _, env := range envs {
			got, err := LoadDefault(env)
			if err != nil {
				t.Fatal(err)
			}
			// DefaultYAML is a copy: not the embedded bytes, so its
			// document is decoded afresh.
			fresh, err := Parse(DefaultName, DefaultYAML(), env.Cwd, env)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, fresh) {
				t.Fatalf("round %d, %+v: the default parsed again differs from a fresh parse:\n%+v\n%+v", round, env, got, fresh)
			}
			if got.Audit.Path != fresh.Audit.Path || len(got.Shell.Rules) == 0 {
				t.Fatalf("audit path %q, %d rules", got.Audit.Path, len(got.Shell.Rules))
			}
		}
	}
}

// TestSplitPatternRemembered: a remembered split answers as the first
// did, errors included, and a caller appending to its words does not
// change what the next caller gets.
func TestSplitPatternRemembered(t *testing.T) {
	w1, err := splitPattern("git commit", syntax.LangBash)
	if err != nil {
		t.Fatal(err)
	}
	_ = append(w1, "changed")
	w2, err := splitPattern("git commit", syntax.LangBash)
	if err != nil || !reflect.DeepEqual(w2, []string{"git", "commit"}) {
		t.Fatalf("second split: %q, %v", w2, err)
	}
	for range 2 {
		if _, err := splitPattern("a; b", syntax.LangBash); err == nil {
			t.Fatal("a; b split without an error")
		}
	}
}

// TestDefaultZones: the default decoded for its zones only is the
// default without its shell section, and fails where it fails, for each
// environment (a working directory that holds the home directory, or
// that is /, among them).
func TestDefaultZones(t *testing.T) {
	for _, env := range []Env{
		{Cwd: "/w", Home: "/h", StateDir: "/h/.local/state/guardrun"},
		{Cwd: "/w", Home: "/other", StateDir: "/s"},
		{Cwd: "/x/y", Home: "/h"},
		{Cwd: "/h", Home: "/h/sub"},
		{Cwd: "/", Home: "/h"},
		{Cwd: "/h", Home: "/h"},
	} {
		full, ferr := LoadDefault(env)
		zones, zerr := DefaultZones(env)
		if (ferr == nil) != (zerr == nil) || ferr != nil && ferr.Error() != zerr.Error() {
			t.Errorf("%+v: LoadDefault: %v; DefaultZones: %v", env, ferr, zerr)
			continue
		}
		if ferr != nil {
			continue
		}
		if len(zones.Shell.Rules) != 0 || len(full.Shell.Rules) == 0 {
			t.Errorf("%+v: %d rules decoded for the zones, %d in the default", env, len(zones.Shell.Rules), len(full.Shell.Rules))
		}
		want := *full
		want.Shell = Config{}.Shell
		want.Shell.Program, want.Shell.Default = "/bin/bash", Action{Allowed: true, Approval: true}
		if !reflect.DeepEqual(zones, &want) || len(zones.Sandbox.Zones) == 0 {
			t.Errorf("%+v: beyond the shell section:\n got %+v\nwant %+v", env, zones, &want)
		}
	}
	// The shell section is left out of the text decoded, line for line.
	z := zonesYAML()
	if bytes.Count(z, []byte("\n")) != bytes.Count(defaultYAML, []byte("\n")) || len(z) > len(defaultYAML)/2 || bytes.Contains(z, []byte("shell:")) {
		t.Errorf("the zones text: %d lines of %d, %d bytes of %d", bytes.Count(z, []byte("\n")), bytes.Count(defaultYAML, []byte("\n")), len(z), len(defaultYAML))
	}
}
