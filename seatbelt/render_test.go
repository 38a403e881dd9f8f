package seatbelt

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/guardrun/guardrun/sandbox"
)

var update = flag.Bool("update", false, "rewrite testdata/*.sb")

// base is a profile like the one Derive makes for a project at
// /Users/u/proj on macOS.
func base() *sandbox.Profile {
	return &sandbox.Profile{
		ReadOnly:  []string{"/bin", "/usr", "/etc", "/Library/Developer/CommandLineTools"},
		ReadWrite: []string{"/Users/u/proj"},
		Cwd:       "/Users/u/proj",
		Home:      "/Users/u",
		EnvDeny:   []string{"AWS_*", "*_TOKEN"},
	}
}

func goldenCases() map[string]*sandbox.Profile {
	cases := map[string]*sandbox.Profile{}
	with := func(name string, f func(p *sandbox.Profile)) {
		p := base()
		f(p)
		cases[name] = p
	}
	with("ro-rw", func(p *sandbox.Profile) {})
	with("ro-only", func(p *sandbox.Profile) { p.ReadWrite = nil })
	with("deny-in-zone", func(p *sandbox.Profile) {
		p.Deny = []string{"/Users/u/proj/.env", "/Users/u/.ssh", "/Users/u/proj/secrets/not-yet"}
	})
	with("network-on", func(p *sandbox.Profile) { p.Network = true })
	with("network-off", func(p *sandbox.Profile) { p.Network = false })
	with("ro-over-in-rw", func(p *sandbox.Profile) {
		p.ReadOnlyOver = []string{"/Users/u/proj/.guardrun.yaml", "/Users/u/proj/.git/hooks"}
	})
	with("private-tmp", func(p *sandbox.Profile) { p.PrivateTmp = true })
	with("protect", func(p *sandbox.Profile) {
		p.ProtectNames = []string{".git/hooks", ".git/config", ".bashrc", "a+b/[x]"}
		p.ReadOnlyOver = []string{"/Users/u/proj/.git/config", "/Users/u/proj/.git/hooks"}
		p.Pinned = []string{"/Users/u/proj/.git"}
		p.UnixSockets = []string{"/Users/u/run/daemon.sock"}
		p.Seccomp.AllowUnix = true
	})
	with("aliases", func(p *sandbox.Profile) {
		p.ReadWrite = []string{"/tmp/proj", "/System/Volumes/Data/Users/u/work"}
		p.Deny = []string{"/tmp/proj/.env", "/var/db/secret"}
		p.ReadOnlyOver = []string{"/System/Volumes/Data/Users/u/work/.guardrun.yaml"}
	})
	with("full", func(p *sandbox.Profile) {
		p.Network = true
		p.PrivateTmp = true
		p.Deny = []string{"/Users/u/proj/.env", "/Users/u/.ssh", "/Users/u/.local/state/guardrun"}
		p.ReadOnlyOver = []string{"/Users/u/proj/.guardrun.yaml"}
		p.Protected = []string{"/Users/u/proj/.guardrun.yaml", "/Users/u/.local/state/guardrun"}
		p.Symlinks = []sandbox.Symlink{{Path: "/usr/local/bin/python3", Target: "/opt/homebrew/bin/python3"}}
	})
	cases["empty"] = &sandbox.Profile{}
	return cases
}

// golden is the profile text followed by its parameters as comments, so the
// file is still a profile a person can paste into sandbox-exec -f.
func golden(r *Rendered) string {
	var b strings.Builder
	b.WriteString(r.Text)
	b.WriteString("\n;; Parameters (-D NAME=VALUE):\n")
	for _, p := range r.Params {
		fmt.Fprintf(&b, ";; %s=%s\n", p.Name, strconv.Quote(p.Value))
	}
	return b.String()
}

func TestGolden(t *testing.T) {
	for name, p := range goldenCases() {
		t.Run(name, func(t *testing.T) {
			r, err := Render(p)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := checkProfile(r.Text, r.Params); err != nil {
				t.Fatalf("malformed profile: %v\n%s", err, r.Text)
			}
			file := filepath.Join("testdata", name+".sb")
			got := golden(r)
			if *update {
				if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if diff := cmp.Diff(got, string(want)); diff != "" {
				t.Errorf("%s (-got +want):\n%s", file, diff)
			}
			// Rendering is a pure function of the profile.
			again, _ := Render(p)
			if diff := cmp.Diff(r, again); diff != "" {
				t.Errorf("second render differs (-first +second):\n%s", diff)
			}
		})
	}
}

// expectedGrants is an independent model of what each Profile path must
// produce, one line per operation and filter. Fixed system grants are not
// listed; they are checked by TestFixedGrantsNeverWrite and the goldens.
func expectedGrants(p *sandbox.Profile) []grant {
	var out []grant
	add := func(action, filter, value string, ops ...string) {
		for _, op := range ops {
			out = append(out, grant{Action: action, Op: op, Filter: filter, Value: value, Param: true})
		}
	}
	canon := func(ss []string) []string {
		var out []string
		for _, s := range ss {
			out = append(out, Canonical(s))
		}
		return out
	}
	both := func(ss []string) []string {
		var out []string
		for _, s := range ss {
			out = append(out, s, Canonical(s))
		}
		return out
	}
	readOps := []string{"file-read*", "file-map-executable", "process-exec*"}
	ro, rw := canon(p.ReadOnly), canon(p.ReadWrite)
	for _, s := range ro {
		add("allow", "subpath", s, readOps...)
	}
	writable := slices.Clone(rw)
	for _, s := range rw {
		add("allow", "subpath", s, readOps...)
		add("allow", "subpath", s, "file-write*")
	}
	if p.PrivateTmp {
		add("allow", "subpath", "", append(readOps, "file-write*")...)
		writable = append(writable, "")
	}
	for _, s := range writable {
		add("allow", "local unix-socket subpath", s, "network-bind", "network-inbound")
	}
	// Connecting: only the listed sockets (sandbox.unix_sockets).
	for _, s := range canon(p.UnixSockets) {
		add("allow", "remote unix-socket literal", s, "network-outbound")
	}
	deny, roOver := both(p.Deny), both(slices.Concat(p.ReadOnlyOver, p.Protected))
	for _, s := range deny {
		add("deny", "subpath", s, "file-read*", "file-write*", "file-map-executable", "process-exec*")
	}
	for _, s := range roOver {
		add("deny", "subpath", s, "file-write*")
	}
	for _, s := range slices.Concat(deny, roOver) {
		add("deny", "remote unix-socket subpath", s, "network-outbound")
		add("deny", "local unix-socket subpath", s, "network-bind", "network-inbound")
		for _, a := range ancestors(s) {
			add("deny", "literal", a, "file-write-unlink", "file-write-create")
		}
	}
	fixed := map[string]bool{}
	for _, s := range slices.Concat(systemLibraries, systemFiles, readDevices) {
		for _, a := range ancestors(s) {
			fixed[a] = true
		}
	}
	for _, s := range aliasLinks {
		fixed[s] = true
	}
	for _, s := range slices.Concat(ro, rw) {
		for _, a := range ancestors(s) {
			if !fixed[a] {
				add("allow", "literal", a, "file-read-metadata")
			}
		}
	}
	for _, l := range p.Symlinks {
		if c := Canonical(l.Path); !fixed[c] {
			add("allow", "literal", c, "file-read-metadata")
		}
	}
	return sortedGrants(out)
}

func sortedGrants(gs []grant) []grant {
	seen := map[grant]bool{}
	var out []grant
	for _, g := range gs {
		if !seen[g] {
			seen[g] = true
			out = append(out, g)
		}
	}
	slices.SortFunc(out, func(a, b grant) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// paramGrants renders p and returns the grants whose value came from a
// parameter, after checking the profile's shape.
func paramGrants(t *testing.T, p *sandbox.Profile) (*Rendered, []grant) {
	t.Helper()
	r, err := Render(p)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	rules, err := checkProfile(r.Text, r.Params)
	if err != nil {
		t.Fatalf("malformed profile: %v\n%s", err, r.Text)
	}
	var out []grant
	for _, g := range grants(rules) {
		if g.Param {
			out = append(out, g)
		}
	}
	return r, sortedGrants(out)
}

// nasty are path components that would end a string, open or close a form,
// start a comment or a regex, or break a line if they reached the text.
var nasty = []string{
	`q"uote`, `par)en`, `(allow default)`, `back\slash`, `trail\`, `sp ace`,
	"new\nline", "cr\rret", "tab\tx", `semi;colon`, `ünï日本`, `#"rx`, `"`,
	`") (allow file-write* (subpath "x`, `\"`, "\x7f", `'quote`, "`tick", "#t",
	"(param \"RW_0\")", "\u2028", "emoji\U0001F600",
}

func TestInjection(t *testing.T) {
	var ro, rw, deny, over []string
	for i, c := range nasty {
		ro = append(ro, fmt.Sprintf("/zzro%d/%s", i, c))
		rw = append(rw, fmt.Sprintf("/zzrw%d/%s/w", i, c))
		deny = append(deny, fmt.Sprintf("/zzrw%d/%s/w/%s", i, c, c))
		over = append(over, fmt.Sprintf("/zzrw%d/%s/w/o%s", i, c, c))
	}
	var links []sandbox.Symlink
	for _, s := range ro {
		links = append(links, sandbox.Symlink{Path: s + "/link", Target: s})
	}
	p := &sandbox.Profile{ReadOnly: ro, ReadWrite: rw, Deny: deny, ReadOnlyOver: over, Protected: over, Symlinks: links, Network: true, PrivateTmp: true}
	r, got := paramGrants(t, p)

	// Every path is a parameter value, exactly where the model says.
	if diff := cmp.Diff(got, expectedGrants(p)); diff != "" {
		t.Errorf("grants (-got +want):\n%s", diff)
	}
	// No path, nor any piece of one, reached the text.
	if strings.Contains(r.Text, "zz") {
		t.Errorf("a path reached the profile text:\n%s", r.Text)
	}
	// The text does not depend on what the paths say, only on how many
	// there are and how they nest: the same profile with tame names renders
	// byte for byte the same.
	tame := func(ss []string) []string {
		var out []string
		for _, s := range ss {
			for i, c := range nasty {
				s = strings.ReplaceAll(s, "/"+c, fmt.Sprintf("/c%02d", i))
			}
			out = append(out, s)
		}
		return out
	}
	var tameLinks []sandbox.Symlink
	for _, s := range tame(ro) {
		tameLinks = append(tameLinks, sandbox.Symlink{Path: s + "/link", Target: s})
	}
	q := &sandbox.Profile{ReadOnly: tame(ro), ReadWrite: tame(rw), Deny: tame(deny), ReadOnlyOver: tame(over), Protected: tame(over), Symlinks: tameLinks, Network: true, PrivateTmp: true}
	r2, _ := paramGrants(t, q)
	if r.Text != r2.Text {
		t.Errorf("profile text depends on path contents:\n%s", cmp.Diff(r.Text, r2.Text))
	}
	for _, c := range nasty {
		// Some components, (param "RW_0") for one, are also legitimate
		// profile text; only those missing from the tame render count.
		if len(c) > 2 && strings.Contains(r.Text, c) && !strings.Contains(r2.Text, c) {
			t.Errorf("component %q reached the profile text", c)
		}
	}
	// The arguments carry each value whole, in one argv element.
	args, err := r.Args("/private/var/folders/x/T/guardrun-tmp-1", []string{"/bin/sh", "-c", "true"})
	if err != nil {
		t.Fatal(err)
	}
	for _, prm := range r.Params {
		if prm.Name == TmpDirParam {
			continue
		}
		if !slices.Contains(args, "-D") || !slices.Contains(args, prm.Name+"="+prm.Value) {
			t.Errorf("argument %s=%q missing", prm.Name, prm.Value)
		}
	}
}

// randomProfile draws paths from a small alphabet with the characters that
// matter to SBPL, with shared prefixes so that nesting, duplicates and
// deny-inside-zone all happen.
func randomProfile(rng *rand.Rand) *sandbox.Profile {
	parts := []string{"zza", "zzb", `zz"`, "zz(", "zz)", `zz\`, "zz ", "zz\n", "zz;", "zzé", `zz#"`, "zz..x", "zz.", "tmp", "var", "etc", "private", "System", "Volumes", "Data", "Users"}
	randPath := func() string {
		n := 1 + rng.IntN(4)
		var b strings.Builder
		for range n {
			b.WriteString("/" + parts[rng.IntN(len(parts))])
		}
		return b.String()
	}
	list := func(max int) []string {
		var out []string
		for range rng.IntN(max + 1) {
			out = append(out, randPath())
		}
		return out
	}
	links := func() []sandbox.Symlink {
		var out []sandbox.Symlink
		for range rng.IntN(3) {
			out = append(out, sandbox.Symlink{Path: randPath(), Target: randPath()})
		}
		return out
	}
	return &sandbox.Profile{
		ReadOnly:     list(4),
		ReadWrite:    list(3),
		Deny:         list(3),
		ReadOnlyOver: list(2),
		Protected:    list(2),
		Symlinks:     links(),
		Network:      rng.IntN(2) == 0,
		PrivateTmp:   rng.IntN(2) == 0,
	}
}

func TestRandomProfiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 500 {
		p := randomProfile(rng)
		r, got := paramGrants(t, p)
		if diff := cmp.Diff(got, expectedGrants(p)); diff != "" {
			t.Fatalf("profile %d %+v: grants (-got +want):\n%s", i, p, diff)
		}
		if strings.Contains(r.Text, "zz") {
			t.Fatalf("profile %d: a path reached the text:\n%s", i, r.Text)
		}
		if !strings.HasPrefix(r.Text, "(version 1)\n(deny default)\n") {
			t.Fatalf("profile %d: bad header", i)
		}
		checkNeverWeaker(t, r)
	}
}

// checkNeverWeaker asserts what no profile may grant, whatever its input:
// writes only to parameter trees and terminal or null devices, no network
// beyond Unix sockets unless IP rules were asked for, nothing unconditional
// except the listed harmless operations.
func checkNeverWeaker(t *testing.T, r *Rendered) {
	t.Helper()
	rules, err := checkProfile(r.Text, r.Params)
	if err != nil {
		t.Fatal(err)
	}
	writableFixed := []string{
		`literal "/dev/null"`, `literal "/dev/tty"`, `literal "/dev/ptmx"`,
		`regex #"^/dev/ttys[0-9]+$"`, `regex #"^/dev/fd/[0-9]+$"`,
		`literal "/dev/stdin"`, `literal "/dev/stdout"`, `literal "/dev/stderr"`,
	}
	for _, g := range grants(rules) {
		if g.Action != "allow" || !strings.HasPrefix(g.Op, "file-write") {
			continue
		}
		if g.Param {
			if g.Filter != "subpath" {
				t.Errorf("write grant on a parameter that is not a tree: %s", g)
			}
			continue
		}
		found := false
		for _, f := range writableFixed {
			if g.Filter+" "+fmt.Sprintf("%q", g.Value) == f || g.Filter+` #"`+g.Value+`"` == f {
				found = true
			}
		}
		if !found {
			t.Errorf("write grant on a fixed path: %s", g)
		}
	}
}

// TestFixedGrantsNeverWrite runs the never-weaker check on the goldens.
func TestFixedGrantsNeverWrite(t *testing.T) {
	for name, p := range goldenCases() {
		t.Run(name, func(t *testing.T) {
			r, err := Render(p)
			if err != nil {
				t.Fatal(err)
			}
			checkNeverWeaker(t, r)
		})
	}
}

func TestNetworkOnlyWhenAsked(t *testing.T) {
	for _, on := range []bool{false, true} {
		p := base()
		p.Network = on
		r, err := Render(p)
		if err != nil {
			t.Fatal(err)
		}
		rules, err := checkProfile(r.Text, r.Params)
		if err != nil {
			t.Fatal(err)
		}
		var ip bool
		for _, g := range grants(rules) {
			if g.Action != "allow" {
				continue
			}
			switch {
			case strings.HasPrefix(g.Op, "network") && !strings.Contains(g.Filter, "unix-socket"):
				ip = true
			case g.Op == "system-socket" && g.Value != "AF_UNIX":
				ip = true
			case g.Op == "mach-lookup" && slices.Contains(networkServices, g.Value):
				ip = true
			}
		}
		if ip != on {
			t.Errorf("Network=%v: IP or resolver grants present = %v", on, ip)
		}
	}
}

func TestDenialsComeLast(t *testing.T) {
	p := base()
	p.Deny = []string{"/Users/u/proj/.env"}
	p.ReadOnlyOver = []string{"/Users/u/proj/.guardrun.yaml"}
	p.Network, p.PrivateTmp = true, true
	r, err := Render(p)
	if err != nil {
		t.Fatal(err)
	}
	// checkProfile refuses an allow after a deny; make sure it has denials
	// to order at all.
	rules, err := checkProfile(r.Text, r.Params)
	if err != nil {
		t.Fatal(err)
	}
	last := rules[len(rules)-1]
	if last.action != "deny" {
		t.Errorf("last rule is %s, want a denial", last.action)
	}
}

func TestCanonical(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"/tmp", "/private/tmp"},
		{"/tmp/x", "/private/tmp/x"},
		{"/tmpx", "/tmpx"},
		{"/var/folders/ab/cd/T", "/private/var/folders/ab/cd/T"},
		{"/etc/passwd", "/private/etc/passwd"},
		{"/private/tmp/x", "/private/tmp/x"},
		{"/private/var", "/private/var"},
		{"/Users/u/tmp", "/Users/u/tmp"},
		{"/System/Volumes/Data/Users/u", "/Users/u"},
		{"/System/Volumes/Data/Usersx", "/System/Volumes/Data/Usersx"},
		{"/System/Volumes/Data", "/System/Volumes/Data"},
		{"/System/Volumes/Data/private/tmp/x", "/private/tmp/x"},
		{"/System/Volumes/Data/usr/local/bin", "/usr/local/bin"},
		{"/System/Volumes/Data/usr/lib", "/System/Volumes/Data/usr/lib"},
		{"/System/Volumes/Data/tmp/x", "/System/Volumes/Data/tmp/x"},
		{"/System/Volumes/Datax/Users", "/System/Volumes/Datax/Users"},
		{"/", "/"},
	} {
		if got := Canonical(tc.in); got != tc.want {
			t.Errorf("Canonical(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestDenyCoversEverySpelling(t *testing.T) {
	p := &sandbox.Profile{ReadWrite: []string{"/tmp"}, Deny: []string{"/tmp/secret"}}
	_, got := paramGrants(t, p)
	var denied []string
	for _, g := range got {
		if g.Action == "deny" && g.Op == "file-read*" {
			denied = append(denied, g.Value)
		}
	}
	if diff := cmp.Diff(denied, []string{"/private/tmp/secret", "/tmp/secret"}); diff != "" {
		t.Errorf("denied spellings (-got +want):\n%s", diff)
	}
	for _, g := range got {
		if g.Action == "allow" && g.Value == "/tmp" {
			t.Errorf("allow on the alias spelling, which the kernel never reports: %s", g)
		}
	}
}

func TestAncestorsProtected(t *testing.T) {
	p := &sandbox.Profile{ReadWrite: []string{"/Users/u/proj"}, ReadOnlyOver: []string{"/Users/u/proj/.git/hooks"}}
	_, got := paramGrants(t, p)
	var unlink []string
	for _, g := range got {
		if g.Op == "file-write-unlink" {
			unlink = append(unlink, g.Action+" "+g.Filter+" "+g.Value)
		}
	}
	want := []string{
		"deny literal /Users", "deny literal /Users/u", "deny literal /Users/u/proj",
		"deny literal /Users/u/proj/.git",
	}
	slices.Sort(unlink)
	if diff := cmp.Diff(unlink, want); diff != "" {
		t.Errorf("unlink protection (-got +want):\n%s", diff)
	}
}

func TestRenderRefuses(t *testing.T) {
	for name, p := range map[string]*sandbox.Profile{
		"nil":        nil,
		"relative":   {ReadOnly: []string{"usr"}},
		"dotdot":     {ReadWrite: []string{"/a/../b"}},
		"trailing":   {Deny: []string{"/a/"}},
		"double":     {ReadOnlyOver: []string{"/a//b"}},
		"empty":      {ReadWrite: []string{""}},
		"nul":        {Deny: []string{"/a\x00b"}},
		"dot":        {ReadOnly: []string{"/a/."}},
		"empty deny": {Deny: []string{""}},
		"protected":  {Protected: []string{"rel"}},
		"symlink":    {Symlinks: []sandbox.Symlink{{Path: "/a/../b", Target: "/c"}}},
	} {
		if _, err := Render(p); err == nil {
			t.Errorf("%s: Render accepted %+v", name, p)
		}
	}
}

func TestArgs(t *testing.T) {
	p := base()
	p.PrivateTmp = true
	r, err := Render(p)
	if err != nil {
		t.Fatal(err)
	}
	argv := []string{"-rf", "--", "x"}
	got, err := r.Args("/var/folders/ab/cd/T/guardrun-tmp-1", argv)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"-p", r.Text}
	for _, prm := range r.Params {
		v := prm.Value
		if prm.Name == TmpDirParam {
			v = "/private/var/folders/ab/cd/T/guardrun-tmp-1"
		}
		want = append(want, "-D", prm.Name+"="+v)
	}
	want = append(want, "--", "-rf", "--", "x")
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("Args (-got +want):\n%s", diff)
	}

	for name, tc := range map[string]struct {
		tmp  string
		argv []string
	}{
		"no tmp":       {"", []string{"true"}},
		"relative tmp": {"tmp", []string{"true"}},
		"empty argv":   {"/private/tmp/x", nil},
		"nul argv":     {"/private/tmp/x", []string{"a\x00b"}},
	} {
		if _, err := r.Args(tc.tmp, tc.argv); err == nil {
			t.Errorf("%s: Args accepted it", name)
		}
	}
	noTmp, err := Render(base())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := noTmp.Args("/private/tmp/x", []string{"true"}); err == nil {
		t.Error("Args accepted a tmp dir for a profile without private tmp")
	}
	bad := &Rendered{Text: "(version 1)", Params: []Param{{Name: "RW_0"}}}
	if _, err := bad.Args("", []string{"true"}); err == nil {
		t.Error("Args passed an empty parameter value")
	}
}

func TestSBPLString(t *testing.T) {
	for _, s := range []string{"", "/usr/lib", `a"b`, `a\b`, `\"`, `") (allow default) ("`, "ünï日本", "#\"x", "a;b"} {
		q, err := sbplString(s)
		if err != nil {
			t.Errorf("sbplString(%q): %v", s, err)
			continue
		}
		forms, err := parseSBPL("(literal " + q + ")")
		if err != nil || len(forms) != 1 || len(forms[0].kids) != 2 || forms[0].kids[1].kind != stringNode {
			t.Errorf("sbplString(%q) = %s does not read back as one string: %v", s, q, err)
			continue
		}
		if got := forms[0].kids[1].text; got != s {
			t.Errorf("sbplString(%q) reads back as %q", s, got)
		}
	}
	for _, s := range []string{"a\nb", "a\x00b", "\x7f", "a\rb", "\x1b[31m", "\u0085", "\xff"} {
		if q, err := sbplString(s); err == nil {
			t.Errorf("sbplString(%q) = %s, want an error", s, q)
		}
	}
	if _, err := sbplRegex(`a"b`); err == nil {
		t.Error(`sbplRegex accepted a quote`)
	}
}

func TestParserRejects(t *testing.T) {
	for _, src := range []string{
		`(allow file-read* (literal "/x)`,
		`(allow file-read* (literal "/x")`,
		`(allow file-read*))`,
		`(allow file-read* (literal "a\nb"))`,
		`(allow file-read* (regex #"abc))`,
		"(allow file-read* (literal \"a\nb\"))",
	} {
		if _, err := parseSBPL(src); err == nil {
			t.Errorf("parser accepted %q", src)
		}
	}
	good := []Param{{"RW_0", "/x"}}
	for _, src := range []string{
		"(version 1)\n(deny default)\n(allow file-write*)",
		"(version 1)\n(deny default)\n(allow default)",
		"(version 1)\n(deny default)\n(allow file-write* (subpath (param \"RW_1\")))",
		"(version 1)\n(deny default)\n(allow file-frobnicate (subpath (param \"RW_0\")))",
		"(version 1)\n(deny default)\n(allow file-write* (prefix (param \"RW_0\")))",
		"(version 1)\n(deny default)\n(deny file-write* (subpath (param \"RW_0\")))\n(allow file-read* (subpath (param \"RW_0\")))",
		"(version 1)\n(allow file-write* (subpath (param \"RW_0\")))",
	} {
		if _, err := checkProfile(src, good); err == nil {
			t.Errorf("checkProfile accepted %q", src)
		}
	}
}

// TestAncestorsHelper pins the helper the ancestor rules rely on.
func TestAncestorsHelper(t *testing.T) {
	if diff := cmp.Diff(ancestors("/a/b/c"), []string{"/a/b", "/a"}); diff != "" {
		t.Error(diff)
	}
	if got := ancestors("/a"); len(got) != 0 {
		t.Errorf("ancestors(/a) = %q", got)
	}
}
