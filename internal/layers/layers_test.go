package layers_test

import (
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/guardrun/guardrun/internal/testing/testenv"
)

// m is the module path; the tables below name guardrun's packages as
// m + "/dir".
const m = "github.com/guardrun/guardrun"

// The layers, top first. A package may import packages of its own layer
// and of the layers below it, never one above: imports point down.
const (
	layerCmd      = iota // cmd/guardrun: main only
	layerCLI             // flags, help, printing
	layerPipeline        // the request pipeline and the fronts that open it
	layerPolicy          // deciding (pure policy, approval, trust) beside the runner
	layerBackend         // the sandbox backends
	layerProfile         // what backends are built from: the profile, the filter, the proxy
	layerSys             // small system helpers
	layerTesting         // test support, imported by tests only; it may import any layer
)

var layerNames = [...]string{"cmd", "cli", "pipeline and fronts", "policy and runner", "backends", "profile, filter and proxy", "system helpers", "test support"}

// layerOf places every package of the module. A package missing here
// fails the test: add it, and a fence below if it must not reach
// something its layer may.
var layerOf = map[string]int{
	"cmd/guardrun": layerCmd,

	"internal/cli": layerCLI,

	"internal/request":      layerPipeline,
	"internal/serve":        layerPipeline,
	"internal/serve/client": layerPipeline,
	"supervisor":            layerPipeline,
	"internal/fsop":         layerPipeline,
	"internal/broker":       layerPipeline,
	"internal/web":          layerPipeline,
	"internal/files":        layerPipeline,
	"internal/mcpserver":    layerPipeline,

	"approval":        layerPolicy,
	"rules":           layerPolicy,
	"cmdsem":          layerPolicy,
	"shellparse":      layerPolicy,
	"internal/config": layerPolicy,
	"internal/agents": layerPolicy,
	"runner":          layerPolicy,
	// Checkpoints run git outside the sandbox, beside the runner.
	"internal/checkpoint": layerPolicy,

	"bwrap":    layerBackend,
	"landlock": layerBackend,
	"seatbelt": layerBackend,

	"sandbox":        layerProfile,
	"seccomp":        layerProfile,
	"seccomp/notify": layerProfile,
	"netproxy":       layerProfile,

	"internal/sys/atomicfile": layerSys,
	"internal/sys/cloexec":    layerSys,
	"internal/sys/regfile":    layerSys,
	"internal/sys/sockdir":    layerSys,
	"internal/sys/ipc":        layerSys,
	"internal/sys/trace":      layerSys,

	"internal/testing/bashoracle": layerTesting,
	"internal/testing/testenv":    layerTesting,
	"internal/testing/testtls":    layerTesting,
	"internal/testing/fakemodel":  layerTesting,
	"integration":                 layerTesting,
	"internal/layers":             layerTesting,
}

// upward are the imports that point up a layer today, each with why it
// is let through. Keep it short: each is debt.
var upward = map[[2]string]string{
	{"netproxy", "rules"}: "the proxy judges each host with rules.Domains, the same policy data the commands' network is decided by",
}

// A build is one configuration the import graph is read in.
type build struct{ goos, cgo string }

var (
	linuxCgo   = build{"linux", "1"}
	linuxNoCgo = build{"linux", "0"}
	darwin     = build{"darwin", "0"}
	allBuilds  = []build{linuxCgo, linuxNoCgo, darwin}
)

// A fence is what one package may not import, each path with why. A
// path ending in /... stands for that package and every one below it.
type fence struct {
	pkg string
	// builds the fence holds in; nil: every build.
	builds []build
	// imports may not be imported by the package's own files.
	imports map[string]string
	// deps may not be anywhere in the package's dependency graph, except
	// the package itself and depsExcept.
	deps       map[string]string
	depsExcept []string
	// stdOnly, when set, says why every package in the graph (but the
	// package itself and depsExcept) must be of the standard library.
	stdOnly string
	// noSyscallBelow, when set, says why no package of the graph outside
	// the standard library may import syscall itself (the standard
	// library's os does, which is fine).
	noSyscallBelow string
}

// Why the pure packages stay pure: they are tested without privileges
// and never act, only decide.
const (
	whyNoExec     = "pure: it decides or describes, it never starts a process"
	whyNoPty      = "pure: terminals belong to the supervisor and the prompts"
	whyNoUnix     = "pure: no raw system calls; it is tested without privileges on every platform"
	whyNoSyscall  = "pure: no raw system calls (the standard library's os uses syscall itself, so only a direct import counts)"
	whyNoUnsafe   = "pure: no unsafe memory tricks in policy code"
	whyNoSiblings = "one backend never imports another: the shared parts live in the layer below (sandbox, seccomp)"
)

// Why the broker and its page stay below the pipeline's other fronts.
const (
	whyBrokerHub = "the broker carries requests and answers between processes: its askers and fronts import it, never the reverse, and it runs nothing"
	whyWebRuns   = "the page answers requests; it never runs one: a command runs in the guardrun that asked"
)

var fences = []fence{
	{
		pkg: "internal/broker",
		deps: map[string]string{m + "/internal/request": whyBrokerHub, m + "/supervisor": whyBrokerHub, m + "/internal/web": whyBrokerHub,
			m + "/runner": whyBrokerHub},
	},
	{
		pkg:  "internal/web",
		deps: map[string]string{m + "/internal/request": whyWebRuns, m + "/runner": whyWebRuns, m + "/supervisor": whyWebRuns},
	},
	{
		pkg:            "shellparse",
		deps:           map[string]string{"os/exec": whyNoExec, "golang.org/x/sys/unix": whyNoUnix, "github.com/creack/pty/...": whyNoPty, m + "/...": "shellparse is the bottom of the policy graph: it parses, and of guardrun reaches only cmdsem's option reader (standard library only)"},
		depsExcept:     []string{m + "/cmdsem"},
		noSyscallBelow: "it parses and never runs anything: nothing it reaches calls syscall directly",
	},
	{
		pkg:        "rules",
		imports:    map[string]string{"syscall": whyNoSyscall, "unsafe": whyNoUnsafe},
		deps:       map[string]string{"os/exec": whyNoExec, "golang.org/x/sys/unix": whyNoUnix, "github.com/creack/pty/...": whyNoPty, m + "/...": "rules is pure policy: of guardrun it uses only the parser, the command table, the profile and regfile's size-bounded read of a regular file"},
		depsExcept: []string{m + "/shellparse", m + "/sandbox", m + "/cmdsem", m + "/internal/sys/regfile"},
	},
	{
		pkg:     "cmdsem",
		imports: map[string]string{"os": "the command table reads no files", "os/exec": whyNoExec, "syscall": whyNoSyscall, "unsafe": whyNoUnsafe},
		deps:    map[string]string{"os/exec": whyNoExec},
		stdOnly: "the command table is plain data: the standard library only, nothing else of guardrun",
	},
	{
		pkg:        "sandbox",
		imports:    map[string]string{"syscall": whyNoSyscall, "unsafe": whyNoUnsafe},
		deps:       map[string]string{"os/exec": whyNoExec, "golang.org/x/...": "the profile is platform-neutral: no golang.org/x/sys or other x packages on any platform", "github.com/creack/pty/...": whyNoPty},
		depsExcept: []string{m + "/internal/sys/regfile"},
		stdOnly:    "the profile is a plain value: the standard library and regfile (which opens only regular files) only",
	},
	{
		pkg:    "seccomp",
		builds: []build{linuxNoCgo, darwin},
		deps:   map[string]string{"github.com/seccomp/libseccomp-golang": "without cgo, or off Linux, the stub must build without libseccomp"},
	},
	{
		pkg:     "seccomp",
		builds:  []build{linuxCgo, darwin},
		imports: map[string]string{"os/exec": "the filter is loaded by the backend that starts the command, not here"},
	},
	{pkg: "bwrap", imports: map[string]string{m + "/landlock": whyNoSiblings, m + "/seatbelt": whyNoSiblings}},
	{pkg: "landlock", imports: map[string]string{m + "/bwrap": whyNoSiblings, m + "/seatbelt": whyNoSiblings}},
	{pkg: "seatbelt", imports: map[string]string{m + "/bwrap": whyNoSiblings, m + "/landlock": whyNoSiblings}},
	{
		pkg:     "runner",
		imports: map[string]string{m + "/rules": "the runner runs the Profile it is handed; deciding is the gate's", m + "/approval": "the runner runs, the gate asks", m + "/shellparse": "the runner never reads the script it runs"},
	},
	{pkg: "approval", imports: map[string]string{m + "/runner": "the gate decides and never runs what it decides on", m + "/bwrap": "the gate never runs", m + "/landlock": "the gate never runs"}},
}

// pureFiles are packages whose renderers must stay pure while some files
// run things: each non-test file other than runFiles may not import
// these. go list cannot say which file of a package imports what.
var pureFiles = []struct {
	pkg      string
	runFiles func(name string) bool
	allowed  map[string][]string // per file, imports it may make after all
	why      string
}{
	{
		pkg:      "seatbelt",
		runFiles: func(name string) bool { return strings.HasSuffix(name, "_darwin.go") },
		allowed:  map[string][]string{"exec_other.go": {"os/exec"}}, // the stub names exec.Cmd
		why:      "only the darwin files run anything (sandbox-exec); the renderer is pure",
	},
}

var fileForbidden = []string{"os", "os/exec", "syscall", "golang.org/x/sys/unix", "unsafe", "net"}

type pkgInfo struct {
	std     bool
	imports []string
}

// graph is the import graph of the module's packages and all they
// depend on, in build b.
func graph(t *testing.T, b build) map[string]pkgInfo {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		testenv.Missing(t, "no go command: %v", err)
	}
	cmd := exec.Command(goBin, "list", "-deps", "-e", "-f", "{{.ImportPath}}\t{{.Standard}}\t{{join .Imports \" \"}}", m+"/...")
	cmd.Env = append(os.Environ(), "GOOS="+b.goos, "CGO_ENABLED="+b.cgo, "GOFLAGS=")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list (GOOS=%s CGO_ENABLED=%s): %v", b.goos, b.cgo, err)
	}
	g := map[string]pkgInfo{}
	for _, line := range strings.Split(string(out), "\n") {
		if line == "" {
			continue
		}
		f := strings.SplitN(line, "\t", 3)
		if len(f) != 3 {
			t.Fatalf("unexpected go list line %q", line)
		}
		g[f[0]] = pkgInfo{std: f[1] == "true", imports: strings.Fields(f[2])}
	}
	return g
}

// closure is pkg and everything it depends on.
func closure(g map[string]pkgInfo, pkg string) []string {
	seen := map[string]bool{}
	var walk func(p string)
	walk = func(p string) {
		if seen[p] {
			return
		}
		seen[p] = true
		for _, i := range g[p].imports {
			walk(i)
		}
	}
	walk(pkg)
	var out []string
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func matches(pattern, path string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return path == base || strings.HasPrefix(path, base+"/")
	}
	return path == pattern
}

func rel(path string) (string, bool) {
	if path == m {
		return ".", true
	}
	r, ok := strings.CutPrefix(path, m+"/")
	return r, ok
}

// TestLayers: every package of the module is placed in a layer and
// imports only down (or within its layer); test support is imported by
// no code outside it; and no package imports what its fence forbids.
func TestLayers(t *testing.T) {
	for _, b := range allBuilds {
		g := graph(t, b)
		var pkgs []string
		for p := range g {
			if _, ok := rel(p); ok {
				pkgs = append(pkgs, p)
			}
		}
		sort.Strings(pkgs)
		for _, p := range pkgs {
			r, _ := rel(p)
			layer, ok := layerOf[r]
			if !ok {
				t.Errorf("%s is in no layer: add it to layerOf in internal/layers/layers_test.go (and a fence, if it must not reach something its layer may)", r)
				continue
			}
			for _, imp := range g[p].imports {
				ir, ok := rel(imp)
				if !ok {
					continue
				}
				il, ok := layerOf[ir]
				if !ok {
					continue // reported as a package of its own
				}
				switch {
				case il == layerTesting && layer != layerTesting:
					t.Errorf("GOOS=%s CGO_ENABLED=%s: %s imports %s: test support is for tests only", b.goos, b.cgo, r, ir)
				case layer == layerTesting:
					// Test support drives any layer.
				case il < layer && upward[[2]string{r, ir}] == "":
					t.Errorf("GOOS=%s CGO_ENABLED=%s: %s (%s) imports %s (%s), a layer above it: imports point down", b.goos, b.cgo, r, layerNames[layer], ir, layerNames[il])
				}
			}
		}
		for _, f := range fences {
			if f.builds != nil && !slices.Contains(f.builds, b) {
				continue
			}
			self := m + "/" + f.pkg
			if _, ok := g[self]; !ok {
				t.Errorf("fence for %s: no such package (GOOS=%s CGO_ENABLED=%s)", f.pkg, b.goos, b.cgo)
				continue
			}
			where := "GOOS=" + b.goos + " CGO_ENABLED=" + b.cgo + ": " + f.pkg
			for _, imp := range g[self].imports {
				for pat, why := range f.imports {
					if matches(pat, imp) {
						t.Errorf("%s imports %s: %s", where, imp, why)
					}
				}
			}
			for _, dep := range closure(g, self) {
				if dep == self || slices.Contains(f.depsExcept, dep) {
					continue
				}
				for pat, why := range f.deps {
					if matches(pat, dep) {
						t.Errorf("%s depends on %s: %s", where, dep, why)
					}
				}
				if f.stdOnly != "" && !g[dep].std {
					t.Errorf("%s depends on %s: %s", where, dep, f.stdOnly)
				}
				if f.noSyscallBelow != "" && !g[dep].std && slices.Contains(g[dep].imports, "syscall") {
					t.Errorf("%s depends on %s, which imports syscall: %s", where, dep, f.noSyscallBelow)
				}
			}
		}
	}
	for k := range upward {
		if _, ok := layerOf[k[0]]; !ok {
			t.Errorf("upward names %s, which is in no layer", k[0])
		}
	}
	for r := range layerOf {
		if _, err := os.Stat(filepath.Join("..", "..", r)); err != nil {
			t.Errorf("layerOf names %s, which is not a directory of the module: remove it", r)
		}
	}
}

// TestPureFiles: in the packages of pureFiles only the files that run
// things import os, os/exec, syscall, unix, unsafe or net.
func TestPureFiles(t *testing.T) {
	for _, pf := range pureFiles {
		files, err := filepath.Glob(filepath.Join("..", "..", pf.pkg, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Errorf("%s: no Go files", pf.pkg)
		}
		for _, f := range files {
			name := filepath.Base(f)
			if strings.HasSuffix(name, "_test.go") || pf.runFiles(name) {
				continue
			}
			af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range af.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if slices.Contains(fileForbidden, p) && !slices.Contains(pf.allowed[name], p) {
					t.Errorf("%s/%s imports %s: %s", pf.pkg, name, p, pf.why)
				}
			}
		}
	}
}
