package sandbox

import (
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The universe of random paths: few names, so that random paths often
// nest, collide and share prefixes (app vs app_backup).
var names = []string{"a", "b", "app", "app_backup", ".env", "x"}

func randRel(r *rand.Rand) string {
	n := 1 + r.Intn(4)
	parts := make([]string, n)
	for i := range parts {
		parts[i] = names[r.Intn(len(names))]
	}
	return filepath.Join(parts...)
}

func randPath(r *rand.Rand, base string) string {
	return filepath.Join(base, randRel(r))
}

// randTree populates base with random directories and files, then with
// random symlinks (some pointing outside base, some to /), so Derive's
// resolution runs against something real. Nothing is ever created through
// a symlink: the test runs as root and a link to / must not turn into a
// write to /.
func randTree(t *testing.T, r *rand.Rand, base string) {
	t.Helper()
	for range 20 {
		p := randPath(r, base)
		if r.Intn(2) == 0 {
			_ = os.MkdirAll(p, 0o755)
		} else if os.MkdirAll(filepath.Dir(p), 0o755) == nil {
			_ = os.WriteFile(p, nil, 0o644)
		}
	}
	for range 8 {
		p := randPath(r, base)
		if !realDirs(base, filepath.Dir(p)) {
			continue
		}
		targets := []string{randPath(r, base), "/", "..", randRel(r), "/usr"}
		_ = os.Symlink(targets[r.Intn(len(targets))], p)
	}
}

// realDirs reports whether dir and every directory between base and dir
// exist and are real directories, not symlinks.
func realDirs(base, dir string) bool {
	for d := dir; Within(d, base); d = filepath.Dir(d) {
		fi, err := os.Lstat(d)
		if err != nil || !fi.IsDir() {
			return false
		}
		if d == base {
			return true
		}
	}
	return false
}

func randSpec(r *rand.Rand, base string) Spec {
	var s Spec
	for i := range r.Intn(4) {
		s.Zones = append(s.Zones, Zone{Name: string(rune('a' + i)), Root: randPath(r, base), Writable: r.Intn(2) == 0})
	}
	for range r.Intn(3) {
		s.Deny = append(s.Deny, randPath(r, base))
	}
	if r.Intn(2) == 0 {
		s.DenyNames = []string{".env"}
	}
	for range r.Intn(3) {
		s.Protect = append(s.Protect, Protected{Path: randPath(r, base), Hide: r.Intn(2) == 0})
	}
	s.Network = r.Intn(2) == 0
	return s
}

// mustResolve resolves a path for the properties' own bookkeeping; a
// symlink loop leaves it lexical.
func mustResolve(t *testing.T, p string) string {
	t.Helper()
	r, err := Resolve(p)
	if err != nil {
		return filepath.Clean(p)
	}
	return r
}

// TestPropertyNeverWeaker checks SPEC §5's promises on random specs and
// random paths: nothing writable that no writable zone covers, nothing
// denied visible, guardrun's own files never writable, no network unless
// allowed.
func TestPropertyNeverWeaker(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	// Links to / and /usr make zones of the whole system; keep their
	// walks short.
	old := MaxWalkEntries
	MaxWalkEntries = 2000
	defer func() { MaxWalkEntries = old }()
	derived := 0
	root := realTemp(t)
	const iters = 150
	for iter := range iters {
		base := filepath.Join(root, strconv.Itoa(iter))
		if err := os.Mkdir(base, 0o755); err != nil {
			t.Fatal(err)
		}
		randTree(t, r, base)
		s := randSpec(r, base)
		p, err := Derive(s)
		if err != nil {
			// Refusing is always safe; the properties are about what
			// is granted. (A zone resolving to / is refused, for one.)
			continue
		}
		derived++
		var rwRoots, denied, protected []string
		for _, z := range s.Zones {
			if z.Writable {
				rwRoots = append(rwRoots, mustResolve(t, z.Root))
			}
		}
		for _, d := range s.Deny {
			denied = append(denied, mustResolve(t, d))
		}
		for _, pr := range s.Protect {
			protected = append(protected, mustResolve(t, pr.Path))
			if pr.Hide {
				denied = append(denied, mustResolve(t, pr.Path))
			}
		}
		if p.Network && !s.Network || p.Seccomp.AllowNetwork && !s.Network {
			t.Fatalf("iter %d: network granted without being allowed", iter)
		}
		probe := func(x string) {
			// The kernel resolves inside the sandbox; Access is about
			// where a name leads.
			x = mustResolve(t, x)
			rd, wr := p.Access(x)
			if wr && !withinAny(x, rwRoots) {
				t.Errorf("iter %d: %s writable but no writable zone covers it\nspec %+v\nprofile %+v", iter, x, s, p)
			}
			if rd && withinAny(x, denied) {
				t.Errorf("iter %d: %s denied but readable\nspec %+v\nprofile %+v", iter, x, s, p)
			}
			if wr && withinAny(x, protected) {
				t.Errorf("iter %d: protected %s writable\nspec %+v\nprofile %+v", iter, x, s, p)
			}
			if rd && len(s.DenyNames) > 0 && len(p.Warnings) == 0 && slices.Contains(strings.Split(x, "/"), ".env") {
				// The walk was not cut short, so every existing .env
				// under a zone was found.
				if _, err := os.Lstat(x); err == nil && withinAny(x, zoneRoots(t, s)) {
					t.Errorf("iter %d: %s has a denied name but is readable", iter, x)
				}
			}
		}
		for range 200 {
			probe(randPath(r, base))
		}
		for _, x := range append(append(rwRoots, denied...), protected...) {
			probe(x)
		}
	}
	t.Logf("%d of %d random specs derived", derived, iters)
	if derived < iters/2 {
		t.Fatalf("only %d of %d random specs derived; the generator is too hostile to test anything", derived, iters)
	}
}

func zoneRoots(t *testing.T, s Spec) []string {
	var out []string
	for _, z := range s.Zones {
		out = append(out, mustResolve(t, z.Root))
	}
	return out
}

func randProfile(r *rand.Rand) *Profile {
	p := &Profile{Network: r.Intn(2) == 0, PrivateTmp: r.Intn(2) == 0}
	p.Seccomp.AllowNetwork = p.Network && r.Intn(2) == 0
	pick := func(n int) []string {
		var l []string
		for range r.Intn(n) {
			l = append(l, randPath(r, "/"))
		}
		return l
	}
	p.ReadOnly = pick(4)
	p.ReadWrite = pick(4)
	p.Deny = pick(3)
	p.ReadOnlyOver = pick(2)
	if r.Intn(3) == 0 {
		p.ReadOnly = append(p.ReadOnly, "/")
	}
	return p
}

// TestPropertyIntersect: the intersection never widens either input, and
// it is exact: it allows whatever both allow.
func TestPropertyIntersect(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	for iter := range 2000 {
		p, op := randProfile(r), randProfile(r)
		in := Intersect(p, op)
		if in.Network && !(p.Network && op.Network) {
			t.Fatalf("iter %d: network widened", iter)
		}
		if in.Seccomp.AllowNetwork && !(p.Seccomp.AllowNetwork && op.Seccomp.AllowNetwork) {
			t.Fatalf("iter %d: seccomp network widened", iter)
		}
		if !in.PrivateTmp && (p.PrivateTmp || op.PrivateTmp) {
			t.Fatalf("iter %d: private /tmp lost", iter)
		}
		var points []string
		for range 100 {
			points = append(points, randPath(r, "/"))
		}
		for _, l := range [][]string{p.ReadOnly, p.ReadWrite, p.Deny, p.ReadOnlyOver, op.ReadOnly, op.ReadWrite, op.Deny, op.ReadOnlyOver} {
			points = append(points, l...)
		}
		for _, x := range points {
			r1, w1 := p.Access(x)
			r2, w2 := op.Access(x)
			ri, wi := in.Access(x)
			if ri && !(r1 && r2) || wi && !(w1 && w2) {
				t.Fatalf("iter %d: %s widened: p=(%v,%v) op=(%v,%v) in=(%v,%v)\np  %+v\nop %+v\nin %+v",
					iter, x, r1, w1, r2, w2, ri, wi, p, op, in)
			}
			if ri != (r1 && r2) || wi != (w1 && w2) {
				t.Fatalf("iter %d: %s narrowed more than needed: p=(%v,%v) op=(%v,%v) in=(%v,%v)\np  %+v\nop %+v\nin %+v",
					iter, x, r1, w1, r2, w2, ri, wi, p, op, in)
			}
		}
		// Commutative in what it allows.
		in2 := Intersect(op, p)
		for _, x := range points {
			a1, b1 := in.Access(x)
			a2, b2 := in2.Access(x)
			if a1 != a2 || b1 != b2 {
				t.Fatalf("iter %d: Intersect not symmetric at %s", iter, x)
			}
		}
	}
}

// TestPropertyNormalize: normalize never changes what Access answers.
func TestPropertyNormalize(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for iter := range 2000 {
		p := randProfile(r)
		n := p.clone()
		n.normalize()
		for range 100 {
			x := randPath(r, "/")
			r1, w1 := p.Access(x)
			r2, w2 := n.Access(x)
			if r1 != r2 || w1 != w2 {
				t.Fatalf("iter %d: normalize changed Access(%s): (%v,%v) -> (%v,%v)\nbefore %+v\nafter  %+v", iter, x, r1, w1, r2, w2, p, n)
			}
		}
	}
}
