package checkpoint

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// gitPaths are where guardrun looks for git: fixed system locations,
// never $PATH, which what ran before (a Makefile's export) can point
// into a zone, where a command could put a git of its own that guardrun
// would then run outside the sandbox.
var gitPaths = []string{"/usr/bin/git", "/bin/git", "/usr/local/bin/git", "/opt/homebrew/bin/git"}

// findGit is the first git of gitPaths that is a regular executable
// file.
func findGit() (string, error) {
	for _, p := range gitPaths {
		fi, err := os.Stat(p)
		if err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("git is not installed (looked in %s)", strings.Join(gitPaths, ", "))
}

// gitConfig is the configuration of every store's git directory. The
// system and global configuration are never read, so this is all git
// knows: no hooks, no fsmonitor, no filters or attribute-driven
// conversions (info/attributes unsets them for every path, and takes
// precedence over the zone's .gitattributes), no excludes beyond the
// zone's .gitignore files, no automatic gc. Nothing is synced to disk
// (as git checkout syncs nothing): a sync per object would cost a
// checkpoint more than its git status, and an object a crash left
// unwritten is found damaged, never trusted. %[1]s is the git
// directory.
const gitConfig = `[core]
	repositoryformatversion = 0
	bare = false
	filemode = true
	symlinks = true
	ignorecase = false
	precomposeunicode = false
	trustctime = true
	checkStat = default
	autocrlf = false
	safecrlf = false
	quotePath = false
	excludesFile = %[1]s/info/empty
	attributesFile = %[1]s/info/empty
	hooksPath = %[1]s/no-hooks
	fsmonitor = false
	untrackedCache = false
	splitIndex = false
	sparseCheckout = false
	bigFileThreshold = 8g
	fsync = none
	logAllRefUpdates = false
[index]
	version = 2
	sparse = false
[feature]
	manyFiles = false
[gc]
	auto = 0
[status]
	relativePaths = false
	showUntrackedFiles = all
	renames = false
	submoduleSummary = false
	aheadBehind = false
[advice]
	addEmbeddedRepo = false
	addIgnoredFile = false
	statusHints = false
	detachedHead = false
[submodule]
	recurse = false
`

// gitAttributes switch off, for every path, what .gitattributes can
// turn on and would change the bytes stored: end-of-line conversion,
// $Id$ expansion, filters (which only config can define, but an unset
// one cannot be asked for), working-tree encodings.
const gitAttributes = "* -text -eol -ident -filter -working-tree-encoding\n"

// repo is one store's git directory over one work tree.
type repo struct {
	git    string
	gitDir string
	index  string
	top    string // the work tree
	home   string // an empty directory for $HOME
	obj    *objects
}

func newRepo(git, zoneDir, top string) *repo {
	r := &repo{
		git:    git,
		gitDir: filepath.Join(zoneDir, "git"),
		index:  filepath.Join(zoneDir, "index"),
		top:    top,
		home:   filepath.Join(zoneDir, "home"),
	}
	r.obj = &objects{dir: r.gitDir, start: r.startCatFile}
	return r
}

// init creates the git directory where it is missing and puts guardrun's
// configuration in place (rewriting it where it differs).
func (r *repo) init() error {
	for _, d := range []string{"objects", "refs/heads", "refs/checkpoints", "refs/perms", "info"} {
		if err := os.MkdirAll(filepath.Join(r.gitDir, d), 0o700); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(r.home, 0o700); err != nil {
		return err
	}
	files := []struct{ name, content string }{
		{"HEAD", "ref: refs/heads/main\n"},
		{"config", fmt.Sprintf(gitConfig, r.gitDir)},
		{"info/attributes", gitAttributes},
		{"info/exclude", ""},
		{"info/empty", ""},
	}
	for _, f := range files {
		p := filepath.Join(r.gitDir, f.name)
		if b, err := os.ReadFile(p); err == nil && string(b) == f.content {
			continue
		}
		if err := writeFileAtomic(p, []byte(f.content), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// env is git's whole environment: nothing of the caller's (no GIT_*
// that could send it elsewhere or change what it reads), no system or
// global config, the C locale.
func (r *repo) env() []string {
	return []string{
		"PATH=/usr/bin:/bin",
		"HOME=" + r.home,
		"LC_ALL=C",
		"TZ=UTC",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_ATTR_NOSYSTEM=1",
		"GIT_NO_REPLACE_OBJECTS=1",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_DIR=" + r.gitDir,
		"GIT_WORK_TREE=" + r.top,
		"GIT_INDEX_FILE=" + r.index,
	}
}

// gitError is git failing: its arguments' first word, its status and
// what it said.
type gitError struct {
	verb   string
	err    error
	stderr string
}

func (e *gitError) Error() string {
	msg := strings.TrimSpace(e.stderr)
	if i := strings.Index(msg, "\n"); i >= 0 {
		// The last line is git's conclusion ("fatal: ..."), the first
		// usually its cause; show both.
		first, last := msg[:i], msg[strings.LastIndex(msg, "\n")+1:]
		msg = first
		if last != first {
			msg += " ... " + last
		}
	}
	if msg == "" {
		msg = e.err.Error()
	}
	return fmt.Sprintf("git %s: %s", e.verb, clip(msg, 300))
}

// gitTimeout bounds one git command: a checkpoint of a very large tree
// on a slow disk, not a git that hangs.
const gitTimeout = 10 * time.Minute

// run runs git with args in the work tree, stdin as its input.
func (r *repo) run(ctx context.Context, stdin []byte, args ...string) ([]byte, string, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.git, args...)
	cmd.Dir = r.top
	cmd.Env = r.env()
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if err != nil {
		return out.Bytes(), errb.String(), &gitError{verb: args[0], err: err, stderr: errb.String()}
	}
	return out.Bytes(), errb.String(), nil
}

// catFile is a running `git cat-file --batch`, for objects that are
// not loose.
type catFile struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func (r *repo) startCatFile() (*catFile, error) {
	cmd := exec.Command(r.git, "cat-file", "--batch")
	cmd.Dir = r.top
	cmd.Env = r.env()
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &catFile{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 64<<10)}, nil
}

func (c *catFile) close() {
	c.in.Close()
	c.cmd.Wait()
}

func (o *objects) openBatch(oid string) (*objectReader, string, error) {
	if o.start == nil {
		return nil, "", &objectError{oid, errors.New("missing")}
	}
	if o.batch == nil {
		b, err := o.start()
		if err != nil {
			return nil, "", &objectError{oid, err}
		}
		o.batch = b
	}
	c := o.batch
	if _, err := io.WriteString(c.in, oid+"\n"); err != nil {
		return nil, "", &objectError{oid, err}
	}
	line, err := c.out.ReadString('\n')
	if err != nil {
		return nil, "", &objectError{oid, err}
	}
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != oid {
		// "OID missing", or git could not read it.
		return nil, "", &objectError{oid, errors.New("missing")}
	}
	size, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil {
		return nil, "", &objectError{oid, errors.New("missing")}
	}
	h := newHash(f[1], size)
	return &objectReader{oid: oid, r: c.out, h: h, left: size, closer: func(left int64) error {
		// Whatever was not read, and the newline after the object.
		if _, err := io.CopyN(io.Discard, c.out, left+1); err != nil {
			o.batch = nil
			c.close()
			return err
		}
		return nil
	}}, f[1], nil
}
