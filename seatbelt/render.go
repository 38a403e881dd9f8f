package seatbelt

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/guardrun/guardrun/sandbox"
)

// Rendered is a Seatbelt profile and the parameters its text refers to.
// The text never contains a path from the Profile: every such path is a
// Param, passed to sandbox-exec as -D NAME=VALUE and read in the text with
// (param "NAME").
type Rendered struct {
	Text   string
	Params []Param
}

// Param is one -D parameter of a rendered profile.
type Param struct{ Name, Value string }

// TmpDirParam names the parameter that holds the per-run temporary
// directory when the Profile asks for a private /tmp. Render cannot know the
// directory (it is created for each run), so it lists the parameter with an
// empty value and Args fills it in; an empty value is never passed on.
const TmpDirParam = "TMPDIR"

// Render turns p into an SBPL profile for sandbox-exec. It fails rather than
// guess when a path is relative, not clean, empty or contains a NUL byte.
func Render(p *sandbox.Profile) (*Rendered, error) {
	if p == nil {
		return nil, errors.New("seatbelt: nil profile")
	}
	for _, list := range []struct {
		field string
		paths []string
	}{
		{"read_only", p.ReadOnly},
		{"read_write", p.ReadWrite},
		{"deny", p.Deny},
		{"read_only_over", p.ReadOnlyOver},
		{"protected", p.Protected},
	} {
		for _, s := range list.paths {
			if err := checkPath(s); err != nil {
				return nil, fmt.Errorf("seatbelt: %s %q: %w", list.field, s, err)
			}
		}
	}
	for _, l := range p.Symlinks {
		if err := checkPath(l.Path); err != nil {
			return nil, fmt.Errorf("seatbelt: symlink %q: %w", l.Path, err)
		}
	}
	w := &writer{names: map[string]string{}, counts: map[string]int{}}
	w.render(p)
	if w.err != nil {
		return nil, w.err
	}
	return &Rendered{Text: w.b.String(), Params: w.params}, nil
}

// checkPath accepts what the sandbox package promises: absolute, cleaned
// paths. Anything else is a bug upstream, and widening or narrowing it here
// would hide that.
func checkPath(s string) error {
	switch {
	case s == "":
		return errors.New("empty path")
	case strings.IndexByte(s, 0) >= 0:
		return errors.New("path contains a NUL byte")
	case !path.IsAbs(s):
		return errors.New("path is not absolute")
	case path.Clean(s) != s:
		return errors.New("path is not clean")
	}
	return nil
}

// Args returns the arguments for /usr/bin/sandbox-exec (without the program
// name): the profile, its parameters, "--" and argv. tmpDir is the per-run
// temporary directory; it is required exactly when the profile refers to
// TmpDirParam.
func (r *Rendered) Args(tmpDir string, argv []string) ([]string, error) {
	if len(argv) == 0 {
		return nil, errors.New("seatbelt: empty command")
	}
	args := []string{"-p", r.Text}
	needTmp := false
	for _, prm := range r.Params {
		v := prm.Value
		if prm.Name == TmpDirParam {
			needTmp = true
			if err := checkPath(tmpDir); err != nil {
				return nil, fmt.Errorf("seatbelt: private temporary directory %q: %w", tmpDir, err)
			}
			v = Canonical(tmpDir)
		}
		// An empty value would turn (subpath (param X)) into a filter whose
		// meaning nobody has checked; refuse instead.
		if v == "" || strings.IndexByte(v, 0) >= 0 || !validName(prm.Name) {
			return nil, fmt.Errorf("seatbelt: bad parameter %q=%q", prm.Name, v)
		}
		args = append(args, "-D", prm.Name+"="+v)
	}
	if tmpDir != "" && !needTmp {
		return nil, errors.New("seatbelt: temporary directory given but the profile has no private /tmp")
	}
	for _, a := range argv {
		if strings.IndexByte(a, 0) >= 0 {
			return nil, fmt.Errorf("seatbelt: argument %q contains a NUL byte", a)
		}
	}
	args = append(args, "--")
	return append(args, argv...), nil
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// privateAliases are the top-level symlinks macOS keeps for BSD paths that
// really live under /private. Seatbelt matches the path the kernel resolved,
// so a rule for /tmp/x never matches anything: the file is /private/tmp/x.
var privateAliases = []string{"/etc", "/tmp", "/var"}

// dataVolumeRoot is where the writable data volume is mounted since macOS
// 10.15. Its top-level directories are firmlinked into the root, and the
// sandbox sees the firmlinked spelling (/Users/me, not
// /System/Volumes/Data/Users/me).
const dataVolumeRoot = "/System/Volumes/Data"

// firmlinked are data-volume directories that appear at the root through
// /usr/share/firmlinks. Only these are rewritten: a path on the data volume
// outside them has no other spelling.
var firmlinked = []string{
	"/Applications", "/Library", "/Users", "/Volumes", "/cores", "/opt",
	"/private", "/usr/local",
}

// Canonical returns the spelling of an absolute, clean path that Seatbelt
// compares against: /tmp, /var and /etc become /private/tmp, /private/var
// and /private/etc, and /System/Volumes/Data/<firmlinked dir> loses its
// prefix. It does not touch the file system, so other symlinks are left to
// the caller (see the package documentation).
func Canonical(p string) string {
	if rest, ok := cutDir(p, dataVolumeRoot); ok && rest != "" {
		for _, f := range firmlinked {
			if _, ok := cutDir(rest, f); ok {
				p = rest
				break
			}
		}
	}
	for _, a := range privateAliases {
		if _, ok := cutDir(p, a); ok {
			return "/private" + p
		}
	}
	return p
}

// cutDir reports whether p is dir or inside it, and returns p relative to
// dir's parent spelling (with a leading slash), or "" when p == dir.
func cutDir(p, dir string) (string, bool) {
	if p == dir {
		return "", true
	}
	if strings.HasPrefix(p, dir+"/") {
		return p[len(dir):], true
	}
	return "", false
}

// spellings returns every spelling of p a denial must cover: the canonical
// one and, when it differs, the one the config used. Denying an extra
// spelling costs nothing; missing the one the kernel reports would leave the
// path open.
func spellings(p string) []string {
	c := Canonical(p)
	if c == p {
		return []string{p}
	}
	return []string{c, p}
}

// ancestors returns the proper ancestors of an absolute clean path, nearest
// first, excluding "/".
func ancestors(p string) []string {
	var out []string
	for d := path.Dir(p); d != "/" && d != "."; d = path.Dir(d) {
		out = append(out, d)
	}
	return out
}

// sbplString quotes s as an SBPL string literal. It is only ever used for
// fixed system names written in this package; paths from the Profile are
// parameters. Control characters and invalid UTF-8 are refused because
// TinyScheme's reader treats some of them specially and none of our fixed
// strings needs them.
func sbplString(s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", fmt.Errorf("seatbelt: string %q is not valid UTF-8", s)
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range s {
		switch {
		case c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0):
			return "", fmt.Errorf("seatbelt: string %q contains a control character", s)
		case c == '\\' || c == '"':
			b.WriteByte('\\')
			b.WriteRune(c)
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
	return b.String(), nil
}

// sbplRegex writes a fixed regular expression as an SBPL #"..." literal.
// Such literals have no escapes, so a quote cannot be represented at all.
func sbplRegex(re string) (string, error) {
	for _, c := range re {
		if c == '"' || c < 0x20 || c == 0x7f {
			return "", fmt.Errorf("seatbelt: regex %q cannot be written as a literal", re)
		}
	}
	return `#"` + re + `"`, nil
}

// writer accumulates the profile text and its parameters. The first error
// sticks; later calls become no-ops for the error but keep writing, which
// is harmless because the text is then discarded.
type writer struct {
	b      strings.Builder
	params []Param
	names  map[string]string // kind + "\x00" + value -> parameter name
	counts map[string]int
	err    error
}

func (w *writer) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// param returns `(param "KIND_n")` for value, reusing the name when the same
// value was already given the same kind.
func (w *writer) param(kind, value string) string {
	key := kind + "\x00" + value
	name, ok := w.names[key]
	if !ok {
		name = fmt.Sprintf("%s_%d", kind, w.counts[kind])
		w.counts[kind]++
		w.names[key] = name
		w.params = append(w.params, Param{Name: name, Value: value})
	}
	return `(param "` + name + `")`
}

func (w *writer) lit(s string) string {
	q, err := sbplString(s)
	if err != nil {
		w.fail(err)
	}
	return q
}

func (w *writer) re(s string) string {
	q, err := sbplRegex(s)
	if err != nil {
		w.fail(err)
	}
	return q
}

func (w *writer) line(s string) {
	w.b.WriteString(s)
	w.b.WriteByte('\n')
}

func (w *writer) comment(lines ...string) {
	w.b.WriteByte('\n')
	for _, l := range lines {
		w.line("; " + l)
	}
}

// rule writes (action ops filters...). A rule without filters applies to
// everything, so callers that mean "these paths" must not reach here with an
// empty list: rule refuses, and only unfiltered does the unconditional form.
func (w *writer) rule(action, ops string, filters []string) {
	if len(filters) == 0 {
		return
	}
	if len(filters) == 1 && len(ops)+len(filters[0]) < 70 {
		w.line("(" + action + " " + ops + " " + filters[0] + ")")
		return
	}
	w.line("(" + action + " " + ops)
	for i, f := range filters {
		end := ""
		if i == len(filters)-1 {
			end = ")"
		}
		w.line("  " + f + end)
	}
}

func (w *writer) unfiltered(action, ops string) {
	w.line("(" + action + " " + ops + ")")
}

func (w *writer) wrap(head string, filters []string) []string {
	out := make([]string, len(filters))
	for i, f := range filters {
		out[i] = "(" + head + " " + f + ")"
	}
	return out
}

func (w *writer) lits(head string, ss ...string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = "(" + head + " " + w.lit(s) + ")"
	}
	return out
}

// Fixed system paths. Keep in sync with docs/macos.md (what needs a Mac to
// verify) when changing any of them.
var (
	// systemLibraries are what dyld and libSystem read before main runs:
	// the shared cache (in a cryptex since macOS 13, in /System/Library/dyld
	// before), the frameworks it refers to, and the data libc reads for
	// time zones and locales. None of it is user data.
	systemLibraries = []string{
		"/System/Cryptexes/OS",
		"/System/Library/Frameworks",
		"/System/Library/PrivateFrameworks",
		"/System/Library/dyld",
		"/System/Volumes/Preboot/Cryptexes/OS",
		"/private/var/db/timezone",
		"/usr/lib",
		"/usr/share/locale",
		"/usr/share/zoneinfo",
		"/usr/share/zoneinfo.default",
	}
	// systemFiles are single files read by libc and by tools that print
	// the OS version (python's platform, clang's driver).
	systemFiles = []string{
		"/System/Library/CoreServices/SystemVersion.plist",
		"/private/etc/localtime",
	}
	// aliasLinks are the symlinks of privateAliases themselves: realpath()
	// and shells lstat them before following.
	aliasLinks = []string{"/etc", "/tmp", "/var"}

	readDevices = []string{
		"/dev/dtracehelper", "/dev/null", "/dev/random", "/dev/urandom", "/dev/zero",
	}
	// stdioDevices only reach descriptors the process already holds; bash
	// opens /dev/fd/N for process substitution.
	stdioDevices = []string{"/dev/stderr", "/dev/stdin", "/dev/stdout"}
	fdRegex      = `^/dev/fd/[0-9]+$`
	ttyRegex     = `^/dev/ttys[0-9]+$`

	// sysctls are read by libc (sysconf, uname), compilers and runtimes
	// detecting the CPU. kern.proc.* is deliberately absent: it lists every
	// process on the host, which the Linux sandbox's pid namespace hides.
	sysctls = []string{
		"hw.activecpu", "hw.byteorder", "hw.cachelinesize", "hw.cachelinesize_compat",
		"hw.cpufamily", "hw.cputype", "hw.l1dcachesize", "hw.l2cachesize",
		"hw.logicalcpu", "hw.logicalcpu_max", "hw.machine", "hw.memsize", "hw.model",
		"hw.ncpu", "hw.nperflevels", "hw.pagesize", "hw.pagesize_compat",
		"hw.physicalcpu", "hw.physicalcpu_max", "hw.vectorunit",
		"kern.argmax", "kern.hostname", "kern.maxfilesperproc", "kern.ngroups",
		"kern.osproductversion", "kern.osrelease", "kern.ostype",
		"kern.osvariant_status", "kern.osversion", "kern.secure_kernel",
		"kern.usrstack64", "kern.version", "machdep.cpu.brand_string",
		"sysctl.proc_cputype", "sysctl.proc_translated", "vm.loadavg",
	}
	sysctlPrefixes = []string{"hw.optional.", "hw.perflevel"}

	// machServices are the daemons libc itself calls: user and group
	// lookups (getpwuid for git, ssh, python's pwd), notifications (time
	// zone changes), logging, and the per-user temporary directory helper
	// that xcrun and confstr() use.
	machServices = []string{
		"com.apple.bsd.dirhelper",
		"com.apple.logd",
		"com.apple.system.logger",
		"com.apple.system.notification_center",
		"com.apple.system.opendirectoryd.libinfo",
		"com.apple.system.opendirectoryd.membership",
	}
	// networkServices resolve names and verify certificates; only granted
	// with network access.
	networkServices = []string{
		"com.apple.SystemConfiguration.DNSConfiguration",
		"com.apple.SystemConfiguration.configd",
		"com.apple.dnssd.service",
		"com.apple.networkd",
		"com.apple.ocspd",
		"com.apple.trustd.agent",
	}
	mDNSResponderSocket = "/private/var/run/mDNSResponder"
)

func (w *writer) render(p *sandbox.Profile) {
	ro := dedupe(mapSlice(p.ReadOnly, Canonical))
	rw := dedupe(mapSlice(p.ReadWrite, Canonical))
	var deny, roOver []string
	for _, d := range p.Deny {
		deny = append(deny, spellings(d)...)
	}
	// Protected paths are already denied or read-only in a Profile Derive
	// made; repeating them here keeps guardrun's own files unwritable
	// (SPEC §5) even if a hand-built Profile forgot them.
	for _, d := range slices.Concat(p.ReadOnlyOver, p.Protected) {
		roOver = append(roOver, spellings(d)...)
	}
	deny, roOver = dedupe(deny), dedupe(roOver)

	w.line("(version 1)")
	w.line("(deny default)")

	w.comment("Processes: children inherit this profile, and only processes in it",
		"can be signalled or inspected.")
	w.unfiltered("allow", "process-fork")
	w.rule("allow", "signal", []string{"(target same-sandbox)"})
	w.rule("allow", "process-info*", []string{"(target same-sandbox)"})

	w.comment("What libc, compilers and interpreters ask of the kernel and of",
		"launchd services before doing any work.")
	w.rule("allow", "sysctl-read", append(w.lits("sysctl-name", sysctls...),
		w.lits("sysctl-name-prefix", sysctlPrefixes...)...))
	w.rule("allow", "mach-lookup", w.lits("global-name", machServices...))
	w.comment("Semaphores back python's multiprocessing locks; the notification",
		"center's shared memory is read by libc's notify(3).")
	w.unfiltered("allow", "ipc-posix-sem")
	w.rule("allow", "ipc-posix-shm-read-data", w.lits("ipc-posix-name", "apple.shm.notification_center"))

	w.comment("Terminals: the inherited tty, /dev/tty, and new ptys for tools",
		"that open one (script, python's pty).")
	w.unfiltered("allow", "pseudo-tty")
	ttys := append(w.lits("literal", "/dev/ptmx", "/dev/tty"), "(regex "+w.re(ttyRegex)+")")
	w.rule("allow", "file-read* file-write-data file-ioctl", ttys)
	w.comment("Devices every program may use.")
	w.rule("allow", "file-read*", w.lits("literal", readDevices...))
	w.rule("allow", "file-write-data", w.lits("literal", "/dev/null"))
	stdio := append(w.lits("literal", stdioDevices...), "(regex "+w.re(fdRegex)+")")
	w.rule("allow", "file-read* file-write-data", stdio)

	w.comment("System libraries: dyld, the shared cache and libc's data files.")
	w.rule("allow", "file-read* file-map-executable", w.lits("subpath", systemLibraries...))
	w.rule("allow", "file-read*", w.lits("literal", systemFiles...))

	// Parameters are numbered in the order trees appear in the Profile;
	// name them first so RO_0 is the first read-only tree, not whatever
	// the ancestors happened to sort before.
	var roF, rwF []string
	for _, s := range ro {
		roF = append(roF, "(subpath "+w.param("RO", s)+")")
	}
	for _, s := range rw {
		rwF = append(rwF, "(subpath "+w.param("RW", s)+")")
	}

	// Metadata of ancestors lets realpath() and getcwd()-style walks reach
	// the granted trees without listing or reading anything on the way.
	var fixedAnc []string
	for _, s := range slices.Concat(systemLibraries, systemFiles, readDevices) {
		fixedAnc = append(fixedAnc, ancestors(s)...)
	}
	fixedAnc = sortedSet(append(fixedAnc, aliasLinks...))
	var treeAnc []string
	for _, s := range slices.Concat(ro, rw) {
		treeAnc = append(treeAnc, ancestors(s)...)
	}
	treeAnc = sortedSet(treeAnc)
	treeAnc = slices.DeleteFunc(treeAnc, func(s string) bool { return slices.Contains(fixedAnc, s) })
	meta := append([]string{"(literal " + w.lit("/") + ")"}, w.lits("literal", fixedAnc...)...)
	for _, a := range treeAnc {
		meta = append(meta, "(literal "+w.param("META", a)+")")
	}
	// The Profile's symlinks exist on the host already (Seatbelt cannot
	// create any); reading the link itself lets a path through it resolve
	// to a target that is granted, or denied, on its own.
	for _, l := range dedupe(mapSlice(symlinkPaths(p.Symlinks), Canonical)) {
		if !slices.Contains(fixedAnc, l) && !slices.Contains(treeAnc, l) {
			meta = append(meta, "(literal "+w.param("LINK", l)+")")
		}
	}
	w.comment("Metadata (stat, readlink) of the directories above every granted",
		"tree and of the profile's symlinks, so paths can be resolved; their",
		"contents stay closed.")
	w.rule("allow", "file-read-metadata", meta)

	if len(roF) > 0 {
		w.comment("Read-only trees: read, map and run.")
		w.rule("allow", "file-read* file-map-executable process-exec*", roF)
	}
	if len(rwF) > 0 {
		w.comment("Read-write trees.")
		w.rule("allow", "file-read* file-map-executable process-exec*", rwF)
		w.rule("allow", "file-write*", rwF)
	}
	var tmpF []string
	if p.PrivateTmp {
		// The value is filled in per run by Args; see TmpDirParam.
		w.params = append(w.params, Param{Name: TmpDirParam})
		tmpF = []string{`(subpath (param "` + TmpDirParam + `"))`}
		w.comment("The private temporary directory of this run (not /tmp, not",
			"the user's /var/folders directory).")
		w.rule("allow", "file-read* file-write* file-map-executable process-exec*", tmpF)
	}

	var sockF []string
	for _, s := range dedupe(mapSlice(p.UnixSockets, Canonical)) {
		sockF = append(sockF, "(literal "+w.param("SOCK", s)+")")
	}
	w.network(p.Network, slices.Concat(rwF, tmpF), sockF)

	w.comment("Everything below is a denial. Seatbelt lets the last matching rule",
		"win, so these come after every allow.")
	if len(deny) > 0 {
		var f []string
		for _, s := range deny {
			f = append(f, "(subpath "+w.param("DENY", s)+")")
		}
		w.comment("Denied paths: no reading, writing, mapping or running, and no",
			"connecting to or binding sockets there.")
		w.rule("deny", "file-read* file-write* file-map-executable process-exec*", f)
		w.rule("deny", "network-outbound", w.wrap("remote unix-socket", f))
		w.rule("deny", "network-bind network-inbound", w.wrap("local unix-socket", f))
	}
	if len(roOver) > 0 {
		var f []string
		for _, s := range roOver {
			f = append(f, "(subpath "+w.param("ROOVER", s)+")")
		}
		w.comment("Read-only paths inside writable trees. Connecting to a socket is",
			"writing to it, so that is denied too.")
		w.rule("deny", "file-write*", f)
		w.rule("deny", "network-outbound", w.wrap("remote unix-socket", f))
		w.rule("deny", "network-bind network-inbound", w.wrap("local unix-socket", f))
	}
	if len(p.ProtectNames) > 0 {
		var f, firsts []string
		for _, n := range p.ProtectNames {
			f = append(f, "(regex "+w.re(`(^|/)`+regexQuote(n)+`(/|$)`)+")")
			if first, _, ok := strings.Cut(n, "/"); ok {
				firsts = append(firsts, "(regex "+w.re(`/`+regexQuote(first)+`$`)+")")
			}
		}
		w.comment("Protected names (sandbox.protect), at any depth and whether or not",
			"they exist yet: something outside the sandbox later runs or obeys",
			"them (git hooks and config, shell startup files, editor settings).")
		w.rule("deny", "file-write*", f)
		if firsts = dedupe(firsts); len(firsts) > 0 {
			w.comment("The directory holding one (.git) cannot be removed or renamed",
				"away, which would free the name for a fresh, writable one.")
			w.rule("deny", "file-write-unlink", firsts)
		}
	}
	var anc []string
	for _, s := range slices.Concat(deny, roOver) {
		anc = append(anc, ancestors(s)...)
	}
	if anc = sortedSet(anc); len(anc) > 0 {
		var f []string
		for _, s := range anc {
			f = append(f, "(literal "+w.param("ANC", s)+")")
		}
		w.comment("Rules match paths, not files: renaming a directory above a",
			"protected path would carry the file out from under its rule, and",
			"creating one (mkdir or rename into place) could plant it. Neither is",
			"allowed for any ancestor of a denied or read-only path.")
		w.rule("deny", "file-write-unlink file-write-create", f)
	}
	w.comment("TIOCSTI pushes bytes into a terminal's input queue, where the next",
		"program reading it (the user's shell) would run them.")
	w.rule("deny", "file-ioctl", []string{"(ioctl-command TIOCSTI)"})
}

// network writes the socket rules. unixF are the filters of trees in which
// Unix-domain sockets may be bound: the writable trees and the private tmp.
// sockF are the sockets that may be connected to (sandbox.unix_sockets):
// Linux refuses socket(AF_UNIX) unless some are listed, so no other one,
// in a zone or not (the Docker daemon's, ssh-agent's, a language server's),
// is reachable, with or without network access.
func (w *writer) network(on bool, unixF, sockF []string) {
	w.comment("Unix-domain sockets: bound only inside writable trees, connected",
		"to only where sandbox.unix_sockets lists them.")
	w.rule("allow", "system-socket", []string{"(socket-domain AF_UNIX)"})
	w.rule("allow", "network-bind network-inbound", w.wrap("local unix-socket", unixF))
	w.rule("allow", "network-outbound", w.wrap("remote unix-socket", sockF))
	if !on {
		return
	}
	w.comment("Network access: IP sockets, name resolution and certificate checks.")
	w.rule("allow", "system-socket", []string{"(socket-domain AF_INET)", "(socket-domain AF_INET6)"})
	w.rule("allow", "network-outbound", []string{`(remote ip "*:*")`})
	w.rule("allow", "network-bind network-inbound", []string{`(local ip "*:*")`})
	w.rule("allow", "network-outbound", []string{"(remote unix-socket (path-literal " + w.lit(mDNSResponderSocket) + "))"})
	w.rule("allow", "mach-lookup", w.lits("global-name", networkServices...))
	w.rule("allow", "sysctl-read", w.lits("sysctl-name-prefix", "net.routetable."))
}

func symlinkPaths(ls []sandbox.Symlink) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.Path
	}
	return out
}

func mapSlice(ss []string, f func(string) string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = f(s)
	}
	return out
}

// dedupe keeps the first occurrence of each string, in order, so the output
// follows the Profile's order and stays stable across runs.
func dedupe(ss []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func sortedSet(ss []string) []string {
	out := slices.Clone(ss)
	slices.Sort(out)
	return slices.Compact(out)
}

// regexQuote escapes the regular expression metacharacters in a name.
func regexQuote(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}
