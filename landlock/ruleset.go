package landlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/guardrun/guardrun/sandbox"
)

// File system access rights, as the Linux UAPI numbers them
// (include/uapi/linux/landlock.h). Spelled out so that this file builds
// on every platform.
const (
	FSExecute    uint64 = 1 << 0
	FSWriteFile  uint64 = 1 << 1
	FSReadFile   uint64 = 1 << 2
	FSReadDir    uint64 = 1 << 3
	FSRemoveDir  uint64 = 1 << 4
	FSRemoveFile uint64 = 1 << 5
	FSMakeChar   uint64 = 1 << 6
	FSMakeDir    uint64 = 1 << 7
	FSMakeReg    uint64 = 1 << 8
	FSMakeSock   uint64 = 1 << 9
	FSMakeFifo   uint64 = 1 << 10
	FSMakeBlock  uint64 = 1 << 11
	FSMakeSym    uint64 = 1 << 12
	FSRefer      uint64 = 1 << 13 // ABI 2
	FSTruncate   uint64 = 1 << 14 // ABI 3
	FSIoctlDev   uint64 = 1 << 15 // ABI 5

	NetBindTCP    uint64 = 1 << 0 // ABI 4
	NetConnectTCP uint64 = 1 << 1 // ABI 4

	ScopeAbstractUnix uint64 = 1 << 0 // ABI 6
	ScopeSignal       uint64 = 1 << 1 // ABI 6
)

// fileRights are the rights that apply to a file that is not a
// directory; a rule on such a file may hold only these.
const fileRights = FSExecute | FSWriteFile | FSReadFile | FSTruncate | FSIoctlDev

// handledFS is every file system right the given ABI knows: one
// Restrict handles them all, so that everything not granted is refused
// and a rename across directories is judged by both sides' rules (the
// REFER right) instead of being refused outright.
func handledFS(abi int) uint64 {
	h := uint64(1<<13 - 1)
	if abi >= 2 {
		h |= FSRefer
	}
	if abi >= 3 {
		h |= FSTruncate
	}
	if abi >= 5 {
		h |= FSIoctlDev
	}
	return h
}

// Accepted losses: names for sandbox.landlock_accept, the parts of a
// profile that the landlock backend cannot enforce and that a config may
// say it can do without. Without them, such a profile is refused.
const (
	// AcceptDenyCreate: a denied or protected path that does not exist,
	// in a directory that stays writable, can be created by the command.
	AcceptDenyCreate = "deny_create"
	// AcceptTruncate: before Landlock ABI 3, files that are only
	// readable can still be truncated.
	AcceptTruncate = "truncate"
	// AcceptScope: before Landlock ABI 6, the command can signal
	// processes outside the sandbox and connect to their abstract unix
	// sockets, and what it leaves running is not ended when it exits.
	AcceptScope = "scope"
	// AcceptTCPPorts: before Landlock ABI 4, a list of allowed TCP
	// connect ports cannot be enforced (any port is reachable where the
	// system call filter allows sockets).
	AcceptTCPPorts = "tcp_ports"
	// AcceptUnixSockets: Landlock has no right for connecting to a
	// pathname unix socket, so with socket(AF_UNIX) allowed for the
	// listed sockets (sandbox.unix_sockets) the command can connect to
	// every socket on the machine whose path it can name.
	AcceptUnixSockets = "unix_sockets"
)

// AcceptNames lists the values sandbox.landlock_accept takes.
var AcceptNames = []string{AcceptDenyCreate, AcceptTruncate, AcceptScope, AcceptTCPPorts, AcceptUnixSockets}

// Part is one part of a profile the landlock backend cannot enforce.
type Part struct {
	// Kind is the sandbox.landlock_accept name that accepts the loss.
	Kind string `json:"kind"`
	// Path is the path concerned, if any.
	Path string `json:"path,omitempty"`
	// Why says what would be lost, for people.
	Why string `json:"why"`
}

func (p Part) String() string {
	if p.Path != "" {
		return fmt.Sprintf("%s (%s): %s", p.Path, p.Kind, p.Why)
	}
	return fmt.Sprintf("%s: %s", p.Kind, p.Why)
}

// UnenforceableError is a profile the landlock backend refuses: the
// parts it cannot enforce and the config does not accept losing.
type UnenforceableError struct {
	Parts []Part
}

func (e *UnenforceableError) Error() string {
	var b strings.Builder
	b.WriteString("landlock cannot enforce this profile in full:")
	kinds := map[string]bool{}
	for _, p := range e.Parts {
		b.WriteString("\n  - " + p.String())
		kinds[p.Kind] = true
	}
	var ks []string
	for _, k := range AcceptNames {
		if kinds[k] {
			ks = append(ks, k)
		}
	}
	fmt.Fprintf(&b, "\nrun it with the bwrap backend (user namespaces), or accept the loss with sandbox.landlock_accept: [%s]", strings.Join(ks, ", "))
	return b.String()
}

// Rule is one Landlock path-beneath rule: Access is allowed on Path and,
// for a directory, everything beneath it.
type Rule struct {
	Path   string `json:"path"`
	Access uint64 `json:"access"`
	Dir    bool   `json:"dir"`
}

// Ruleset is what the landlock backend applies to a command: the rights
// it handles (refused unless a rule grants them), the rules, the scopes,
// and the TCP ports it may connect to.
type Ruleset struct {
	ABI        int    `json:"abi"`
	HandledFS  uint64 `json:"handled_fs"`
	HandledNet uint64 `json:"handled_net"`
	Scoped     uint64 `json:"scoped"`
	Rules      []Rule `json:"rules"`
	// ConnectTCP are the TCP ports connect may reach (HandledNet set).
	ConnectTCP []uint16 `json:"connect_tcp,omitempty"`
	// Fixed are writable directories whose entries are fixed: they hold
	// a denied or protected name, so the directory itself is not granted
	// (a Landlock rule covers everything beneath it); each of its other
	// entries is granted on its own. Existing files there stay readable
	// and writable; nothing can be created, removed or renamed directly
	// in it.
	Fixed []string `json:"fixed,omitempty"`
	// Served are the directories of Fixed whose other entries guardrun
	// creates, removes and renames for the command (dirs_linux.go), each
	// with the names in it that stay as they are: denied, read-only, or
	// on the way to either, whether they exist or not.
	Served []Served `json:"served,omitempty"`
	// Watch are protected names (and missing denied names) that are not
	// enforced by rules: their directories stay writable, the command
	// runs, and afterwards each is compared with what it was before and
	// put back (see Watch).
	Watch []Watch `json:"watch,omitempty"`
	// Lost are the parts the config accepted losing.
	Lost []Part `json:"lost,omitempty"`
	// TmpDir is the command's own temporary directory ($TMPDIR).
	TmpDir string `json:"tmpdir,omitempty"`
}

// Served is a directory of Fixed that guardrun serves: the command's
// calls that create, remove or rename one of its entries are routed to
// guardrun, which makes them on a thread restricted by the ruleset and
// the rights to change Dir's entries, except for the names in Keep and
// the denied and protected names of the profile (case folded).
type Served struct {
	Dir  string   `json:"dir"`
	Keep []string `json:"keep"`
}

// PoolSize is how many new files per file system of the served
// directories the command can create (and open again) there; past them
// a new file there is refused (EACCES), said once after the command.
const PoolSize = 64

// DirPoolSize is how many new directories the command can make in the
// served directories that are as usable as any in a writable zone
// (Landlock rules of their own, made before the command starts, in
// guardrun's state directory when it is on the same file system): past
// them, or without one, a new directory is served like its parent and
// the files made in it come from the same PoolSize.
const DirPoolSize = 16

// Watch is a path the landlock backend restores after the command
// instead of keeping it read-only while it runs: a protected name
// (.git/config, .git/hooks, .bashrc, .vscode, ...) that exists, whose
// content is snapshot before the command and put back after if the
// command changed, replaced, removed or hard-linked it; or a protected or
// denied name that does not exist, moved aside after the command if it
// was created. Splitting the directories above them instead (Fixed)
// would leave the workspace root and every .git without new entries:
// no git commit, no new file.
type Watch struct {
	Path string `json:"path"`
	// Root is the writable tree holding Path (a profile's ReadWrite
	// entry): the walk down to Path starts there and follows no link.
	Root string `json:"root"`
	// Missing: Path did not exist when the ruleset was built.
	Missing bool `json:"missing,omitempty"`
}

// Bounds of one watched directory's snapshot (.git/hooks, .vscode):
// larger trees keep the sibling method (Fixed).
const (
	MaxWatchEntries = 256
	MaxWatchBytes   = 4 << 20
	// MaxWatchTotal bounds the bytes of all a command's snapshots
	// together (up to 512 protected paths could each be MaxWatchBytes:
	// gigabytes read and stored while other guardruns wait to take
	// theirs); paths past it keep the sibling method as larger ones do.
	MaxWatchTotal = 16 << 20
)

// ProxyABI is the Landlock ABI the route to guardrun's proxy needs: TCP
// rules (ABI 4, Linux 6.7).
const ProxyABI = 4

// Options are the inputs to Build beyond the profile.
type Options struct {
	// ABI is the kernel's Landlock ABI version (1 or later).
	ABI int
	// TmpDir, when set, is the command's own temporary directory,
	// granted read-write (the profile's private /tmp).
	TmpDir string
	// ConnectTCP, when not nil, limits TCP: connect only to these ports,
	// bind to none (Landlock ABI 4 network rules). It is the hook for a
	// local proxy: the command may reach the proxy's port and nothing
	// else over TCP. Landlock matches ports, not addresses, so the system
	// call filter or the proxy's address must do the rest. Nil leaves
	// TCP to the profile's network setting and the system call filter.
	ConnectTCP []uint16
	// Accept are the losses the config accepts (AcceptNames).
	Accept []string
	// Self is guardrun's own executable. With the signal scope (ABI 6)
	// the command is started through it (a trampoline that nests the
	// command's Landlock domain, so that the command cannot signal
	// guardrun), so it gets execute and read.
	Self string
	// Lstat and ReadDir look at the host file system; nil means the real
	// one. Tests pass fakes.
	Lstat   func(path string) (os.FileInfo, error)
	ReadDir func(path string) ([]os.DirEntry, error)
}

// devices are the /dev entries a command gets. Not /dev/ptmx and
// /dev/pts, which bwrap's fresh /dev has: here they are the host's, and a
// rule on /dev/pts would let the command open the person's other
// terminals and write to them. So the command cannot allocate a
// terminal of its own (its inherited stdio may still be one).
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

type want int

const (
	none want = iota
	ro
	rw
)

// lstatHost is os.Lstat with the bwrap backend's placeholders (the mount
// points of a bwrap command's masks for missing names, running now in the
// same tree) answered as missing, which is what they stand for: they are
// removed when that command ends. Seen as existing, a missing denied
// name gave its directory fixed entries, or was refused when it was gone
// a moment later.
func lstatHost(path string) (os.FileInfo, error) {
	fi, err := os.Lstat(path)
	if err == nil && isPlaceholder(path, fi) {
		return nil, &os.PathError{Op: "lstat", Path: path, Err: os.ErrNotExist}
	}
	return fi, err
}

// Build turns p into the Landlock ruleset that enforces it, or says what
// it cannot enforce (*UnenforceableError). It reads the host file system
// (through Options) to grant the siblings of denied paths, and is
// otherwise pure.
//
// Landlock only grants: a rule on a directory covers everything beneath
// it. So a directory that holds something with less access than itself
// (a denied name, guardrun's read-only config, a read-only zone inside a
// writable one) is not granted as a whole: it gets only the right to list
// it, and each other entry is granted on its own, recursively along the
// way to what must stay out.
func Build(p *sandbox.Profile, o Options) (*Ruleset, error) {
	if p == nil {
		return nil, errors.New("landlock: no profile")
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("landlock: %w", err)
	}
	if o.ABI < 1 {
		return nil, errors.New("landlock: the kernel has no Landlock (it needs Linux 5.13 or later with landlock in the lsm= list)")
	}
	if o.Lstat == nil {
		o.Lstat = lstatHost
	}
	if o.ReadDir == nil {
		o.ReadDir = os.ReadDir
	}
	b := &builder{p: p, o: o, accept: map[string]bool{}}
	for _, a := range o.Accept {
		b.accept[a] = true
	}
	rs := &Ruleset{ABI: o.ABI, HandledFS: handledFS(o.ABI), TmpDir: o.TmpDir}
	b.rs = rs
	b.rwRights = rs.HandledFS &^ (FSMakeChar | FSMakeBlock)
	b.roRights = rs.HandledFS & (FSExecute | FSReadFile | FSReadDir)

	var parts []Part
	lose := func(pt Part) {
		if b.accept[pt.Kind] {
			rs.Lost = append(rs.Lost, pt)
		} else {
			parts = append(parts, pt)
		}
	}
	if o.ABI < 3 {
		lose(Part{Kind: AcceptTruncate, Why: fmt.Sprintf("Landlock ABI %d cannot refuse truncating files that are only readable (ABI 3)", o.ABI)})
	}
	if o.ABI >= 6 {
		rs.Scoped = ScopeAbstractUnix | ScopeSignal
	} else {
		lose(Part{Kind: AcceptScope, Why: fmt.Sprintf("Landlock ABI %d cannot keep signals and abstract unix sockets inside the sandbox, nor end what the command leaves running (ABI 6)", o.ABI)})
	}
	if p.Seccomp.AllowUnix && len(p.UnixSockets) > 0 {
		lose(Part{Kind: AcceptUnixSockets, Path: strings.Join(p.UnixSockets, ", "),
			Why: "Landlock cannot keep connect(2) to the listed unix sockets: with socket(AF_UNIX) allowed for them, every unix socket on the machine whose path the command can name is reachable (a container runtime's, the system bus)"})
	}
	switch {
	case o.ConnectTCP != nil && o.ABI >= 4:
		rs.HandledNet = NetBindTCP | NetConnectTCP
		rs.ConnectTCP = slices.Clone(o.ConnectTCP)
		slices.Sort(rs.ConnectTCP)
		rs.ConnectTCP = slices.Compact(rs.ConnectTCP)
	case o.ConnectTCP != nil:
		lose(Part{Kind: AcceptTCPPorts, Why: fmt.Sprintf("Landlock ABI %d cannot limit TCP to ports (ABI 4)", o.ABI)})
	case !p.Network && o.ABI >= 4:
		// The system call filter already refuses such sockets; refuse
		// TCP here too, so one mistake is not enough.
		rs.HandledNet = NetBindTCP | NetConnectTCP
	}

	b.watch()
	b.collect()
	b.missing(lose)
	for _, r := range b.roots {
		b.grant(r.path, r.w)
	}
	for _, d := range devices {
		if fi, err := o.Lstat(d); err == nil {
			acc := FSReadFile | FSWriteFile | FSTruncate | FSIoctlDev
			if fi.IsDir() {
				acc |= FSReadDir
			}
			b.rule(d, acc, fi.IsDir())
		}
	}
	// /proc, read-only: programs read their own entries; Landlock's
	// ptrace rules keep other processes' memory, environment and
	// descriptors out of reach.
	b.rule("/proc", FSReadFile|FSReadDir, true)
	// guardrun's own executable: the trampoline that nests the command's
	// domain (ABI 6, where signals are scoped).
	if o.Self != "" && o.ABI >= 6 {
		b.rule(o.Self, FSExecute|FSReadFile, false)
	}
	if o.TmpDir != "" {
		b.rule(o.TmpDir, b.rwRights, true)
	}
	if len(parts) > 0 {
		return nil, &UnenforceableError{Parts: parts}
	}
	slices.Sort(rs.Fixed)
	rs.Fixed = slices.Compact(rs.Fixed)
	slices.SortFunc(rs.Served, func(a, c Served) int { return strings.Compare(a.Dir, c.Dir) })
	rs.Served = slices.CompactFunc(rs.Served, func(a, c Served) bool { return a.Dir == c.Dir })
	return rs, nil
}

type root struct {
	path string
	w    want
}

type limit struct {
	path    string
	w       want
	missing bool
}

type builder struct {
	p                  *sandbox.Profile
	o                  Options
	rs                 *Ruleset
	accept             map[string]bool
	roRights, rwRights uint64
	roots              []root
	limits             []limit
	watched            map[string]bool
	watchBytes         int64 // what the watched paths hold, for MaxWatchTotal
}

// watch picks the paths restored after the command rather than kept out
// by rules: protected names the profile found (ReadOnlyOver entries that
// are not guardrun's own files), and missing paths that come from a
// denied or protected name (a .env or .guardrun.yaml that does not
// exist), each inside a writable tree. guardrun's own existing files and
// the config's denied paths keep the rules. An existing directory beyond
// MaxWatchEntries or MaxWatchBytes keeps the rules too, and so does what
// would take the watched paths' bytes past MaxWatchTotal.
func (b *builder) watch() {
	b.watched = map[string]bool{}
	holder := func(x string) string {
		top := ""
		for _, w := range b.p.ReadWrite {
			if w != x && sandbox.Within(x, w) && len(w) > len(top) {
				top = w
			}
		}
		return top
	}
	own := func(x string) bool {
		return slices.ContainsFunc(b.p.Protected, func(pr string) bool { return sandbox.Within(x, pr) })
	}
	add := func(x string, missing bool) bool {
		top := holder(x)
		if top == "" || b.access(filepath.Dir(x)) != rw || b.watched[x] {
			return false
		}
		b.watched[x] = true
		b.rs.Watch = append(b.rs.Watch, Watch{Path: x, Root: top, Missing: missing})
		return true
	}
	// addSized is add for an existing path holding size bytes, within
	// MaxWatchTotal.
	addSized := func(x string, size int64) {
		if b.watchBytes+size <= MaxWatchTotal && add(x, false) {
			b.watchBytes += size
		}
	}
	for _, x := range b.p.ReadOnlyOver {
		fi, err := b.o.Lstat(x)
		if own(x) {
			// guardrun's own existing files keep the rules; one
			// missing now (it was a bwrap command's placeholder when
			// the profile was made) is what a missing one is below.
			if err != nil && slices.Contains(b.p.ProtectNames, filepath.Base(x)) {
				add(x, true)
			}
			continue
		}
		switch {
		case err != nil:
			add(x, true)
		case !fi.IsDir():
			switch {
			case fi.Mode()&os.ModeSymlink != 0:
				add(x, false)
			case fi.Mode().IsRegular() && fi.Size() <= MaxWatchBytes:
				addSized(x, fi.Size())
			}
		default:
			if size, ok := b.small(x); ok {
				addSized(x, size)
			}
		}
	}
	// Missing names no placeholder can stand for: restored (moved
	// aside) here, by the same code as the others, right after the
	// command and before guardrun writes its end record.
	for _, x := range b.p.MoveAfter {
		if _, err := b.o.Lstat(x); err != nil {
			add(x, true)
		}
	}
	for _, x := range b.p.Deny {
		base := filepath.Base(x)
		if !slices.Contains(b.p.DenyNames, base) && !(own(x) && slices.Contains(b.p.ProtectNames, base)) {
			continue
		}
		if _, err := b.o.Lstat(x); err == nil {
			continue // an existing denied file keeps the rules
		}
		add(x, true)
	}
	slices.SortFunc(b.rs.Watch, func(a, c Watch) int { return strings.Compare(a.Path, c.Path) })
}

// small reports whether the tree at dir is within the snapshot's bounds,
// and the bytes of its files.
func (b *builder) small(dir string) (int64, bool) {
	n, size := 0, int64(0)
	var walk func(d string) bool
	walk = func(d string) bool {
		ents, err := b.o.ReadDir(d)
		if err != nil {
			return false
		}
		for _, e := range ents {
			if n++; n > MaxWatchEntries {
				return false
			}
			c := filepath.Join(d, e.Name())
			// Names and links' targets count as the snapshot
			// counts them (node.bytes).
			if size += int64(len(e.Name())); size > MaxWatchBytes {
				return false
			}
			switch {
			case e.IsDir():
				if !walk(c) {
					return false
				}
			case e.Type().IsRegular() || e.Type()&os.ModeSymlink != 0:
				fi, err := b.o.Lstat(c)
				if err != nil {
					return false
				}
				if size += fi.Size(); size > MaxWatchBytes {
					return false
				}
			default:
				return false // a device, fifo or socket: not restorable
			}
		}
		return true
	}
	ok := walk(dir)
	return size, ok
}

func (b *builder) access(path string) want {
	r, w := b.p.Access(path)
	switch {
	case w:
		return rw
	case r:
		return ro
	}
	return none
}

func (b *builder) rights(w want) uint64 {
	switch w {
	case rw:
		return b.rwRights
	case ro:
		return b.roRights
	}
	return 0
}

// collect lists the trees to grant (roots) and the paths that must get
// less than the tree around them (limits).
func (b *builder) collect() {
	var cands []string
	cands = append(cands, b.p.ReadOnly...)
	cands = append(cands, b.p.ReadWrite...)
	cands = append(cands, b.p.ReadOnlyOver...)
	slices.Sort(cands)
	cands = slices.Compact(cands)
	cands = slices.DeleteFunc(cands, func(c string) bool { return b.watched[c] })
	for _, c := range cands {
		if w := b.access(c); w != none {
			b.roots = append(b.roots, root{c, w})
		}
	}
	points := append(slices.Clone(cands), b.p.Deny...)
	points = slices.DeleteFunc(points, func(c string) bool { return b.watched[c] })
	slices.Sort(points)
	points = slices.Compact(points)
	for _, x := range points {
		wx := b.access(x)
		// The most any enclosing root grants: Landlock adds the rules
		// of every ancestor.
		above := none
		for _, r := range b.roots {
			if r.path != x && sandbox.Within(x, r.path) && r.w > above {
				above = r.w
			}
		}
		if wx < above {
			_, err := b.o.Lstat(x)
			b.limits = append(b.limits, limit{path: x, w: wx, missing: err != nil})
		}
	}
}

// missing decides, for each limit that does not exist on the host,
// whether it matters: only where its nearest existing ancestor is
// writable could the command create it. There it is enforced for free
// when that directory's entries are fixed anyway (it holds an existing
// limit too); otherwise it is a part Landlock cannot enforce without
// taking the directory's writability away.
func (b *builder) missing(lose func(Part)) {
	var keep []limit
	for _, l := range b.limits {
		if !l.missing {
			keep = append(keep, l)
			continue
		}
		anc := filepath.Dir(l.path)
		for anc != "/" {
			if fi, err := b.o.Lstat(anc); err == nil {
				if !fi.IsDir() {
					anc = "" // under a file: nothing can be created
				}
				break
			}
			anc = filepath.Dir(anc)
		}
		if anc == "" || b.access(anc) != rw {
			continue
		}
		// An existing limit beneath anc splits it anyway.
		fixedAnyway := slices.ContainsFunc(b.limits, func(o limit) bool {
			return !o.missing && o.path != anc && sandbox.Within(o.path, anc)
		})
		if fixedAnyway {
			keep = append(keep, l)
			continue
		}
		lose(Part{Kind: AcceptDenyCreate, Path: l.path,
			Why: fmt.Sprintf("does not exist, and Landlock cannot keep it from being created without making all of %s unwritable", anc)})
		if !b.accept[AcceptDenyCreate] {
			keep = append(keep, l)
		}
	}
	b.limits = keep
}

// grant gives w on path and everything beneath it, except the limits
// beneath it, which get what they should.
func (b *builder) grant(path string, w want) {
	var below []limit
	for _, l := range b.limits {
		if l.path != path && sandbox.Within(l.path, path) && l.w < w {
			below = append(below, l)
		}
	}
	fi, err := b.o.Lstat(path)
	if err != nil {
		return // a tree that does not exist exposes nothing
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		// A rule on a link would land on its target, which has its own
		// access (or none). Roots are resolved by Derive; this is an
		// entry met while granting siblings.
		return
	}
	if len(below) == 0 || !fi.IsDir() {
		b.rule(path, b.rights(w), fi.IsDir())
		return
	}
	// Split: list the directory, grant each entry but the way to what
	// must stay out.
	if w >= ro {
		b.rule(path, FSReadDir, true)
	}
	if w == rw {
		b.rs.Fixed = append(b.rs.Fixed, path)
		b.rs.Served = append(b.rs.Served, Served{Dir: path, Keep: b.keep(path, below)})
	}
	ents, err := b.o.ReadDir(path)
	if err != nil {
		return
	}
	for _, e := range ents {
		c := filepath.Join(path, e.Name())
		if slices.ContainsFunc(b.roots, func(r root) bool { return r.path == c }) {
			continue // granted as a root of its own
		}
		if slices.ContainsFunc(b.limits, func(l limit) bool { return l.path == c }) {
			continue // a limit with no access, or a root already
		}
		onWay := slices.ContainsFunc(below, func(l limit) bool { return sandbox.Within(l.path, c) })
		if onWay {
			b.grant(c, w)
			continue
		}
		// The directory listing says what each entry is: no stat per
		// entry. A link gets no rule (its target has its own access).
		if e.Type()&os.ModeSymlink == 0 {
			b.rule(c, b.rights(w), e.IsDir())
		}
	}
}

// keep are the names in dir, a directory split because of below, that
// stay as they are when its entries are served: the first component
// beneath dir of every limit (denied, read-only; existing or not), of
// every root of its own (a read-only zone inside), and of every watched
// path (a protected name restored after the command, and the
// directories on the way to it).
func (b *builder) keep(dir string, below []limit) []string {
	var out []string
	first := func(x string) {
		if x == dir || !sandbox.Within(x, dir) {
			return
		}
		rel := strings.TrimPrefix(x, dir)
		rel = strings.TrimPrefix(rel, "/")
		if i := strings.IndexByte(rel, '/'); i >= 0 {
			rel = rel[:i]
		}
		out = append(out, rel)
	}
	for _, l := range below {
		first(l.path)
	}
	for _, l := range b.limits {
		first(l.path)
	}
	for _, r := range b.roots {
		first(r.path)
	}
	for _, w := range b.rs.Watch {
		first(w.Path)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func (b *builder) rule(path string, acc uint64, dir bool) {
	acc &= b.rs.HandledFS
	if !dir {
		acc &= fileRights
	}
	if acc == 0 {
		return
	}
	b.rs.Rules = append(b.rs.Rules, Rule{Path: path, Access: acc, Dir: dir})
}

// AccessName is a short name for a rule's rights, for people: "rw",
// "ro", "list" (a directory that may only be listed), "dev" or the
// rights in hexadecimal.
func AccessName(acc uint64, dir bool) string {
	const ro = FSExecute | FSReadFile | FSReadDir
	switch {
	case acc&(FSMakeReg|FSRemoveFile) == FSMakeReg|FSRemoveFile:
		return "rw"
	case acc == FSReadDir:
		return "list"
	case acc&^ro == 0 && acc&FSReadFile != 0 && acc&FSExecute != 0:
		return "ro"
	case acc == FSReadFile|FSReadDir:
		return "ro-noexec"
	case acc&FSWriteFile != 0 && acc&FSIoctlDev != 0:
		return "dev"
	case acc&FSWriteFile != 0 && !dir:
		return "rw-file"
	}
	return fmt.Sprintf("%#x", acc)
}

// Watchable reports whether the command may watch the file at path (the
// real path of the object it named) with inotify: whether it may read
// it by the profile (sandbox.Profile.Access: inside a zone, not denied),
// or it is inside the command's own $TMPDIR. Landlock does not check
// inotify_add_watch, so guardrun adds such watches itself after asking
// this (watch_linux.go). Stricter than the ruleset, which also lets the
// command read devices and /proc: those are not watched.
func (rs *Ruleset) Watchable(p *sandbox.Profile, path string) bool {
	r, _ := rs.commandAccess(p, path)
	return r
}

// MetadataWritable reports whether the command may change the metadata
// (mode, owner, timestamps, extended attributes) of the file at path,
// the real path of the object it named (no symbolic links in it): the
// judgement Landlock applies to writing it. That is the profile's
// (sandbox.Profile.Access: inside a read-write zone, not denied, not
// under a read-only zone, guardrun's own files or a protected name), or
// inside the command's own $TMPDIR. Landlock has no rights for
// metadata, so guardrun makes these calls itself after asking this
// (metadata_linux.go). Devices and /proc, which the ruleset lets the
// command write, are not writable here: their metadata is the host's.
func (rs *Ruleset) MetadataWritable(p *sandbox.Profile, path string) bool {
	_, w := rs.commandAccess(p, path)
	return w
}

// commandAccess is what the command may do to the file at path, a real
// path (absolute, clean; anything else: nothing), for the calls guardrun
// serves for it: the profile's access, or everything inside its $TMPDIR.
func (rs *Ruleset) commandAccess(p *sandbox.Profile, path string) (read, write bool) {
	if p == nil || !filepath.IsAbs(path) || filepath.Clean(path) != path || strings.ContainsRune(path, 0) {
		return false, false
	}
	if rs != nil && rs.TmpDir != "" && sandbox.Within(path, rs.TmpDir) {
		return true, true
	}
	return p.Access(path)
}
