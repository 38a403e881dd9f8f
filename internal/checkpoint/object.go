package checkpoint

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/rand"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/guardrun/guardrun/internal/sys/atomicfile"
)

// The store's objects are git's: the snapshot writes blobs and trees
// with git itself, and guardrun reads them back (and writes its own
// small objects: commits and permission lists) in the loose format
// git uses, zlib("TYPE SIZE\0CONTENT") named by the SHA-1 of the
// uncompressed bytes. Every object read is checked against its name,
// so a damaged one is an error, never wrong content restored.

// emptyTree is the name of the tree with no entries.
const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// maxMetaObject bounds the objects read whole into memory: trees,
// commits and permission lists. A file's content is streamed.
const maxMetaObject = 256 << 20

// objectError is a missing or damaged object: the store cannot restore
// what it names.
type objectError struct {
	oid string
	err error
}

func (e *objectError) Error() string { return fmt.Sprintf("object %s: %v", e.oid, e.err) }
func (e *objectError) Unwrap() error { return e.err }

// errCorrupt is wrapped by the errors of an object whose bytes are not
// what its name says.
var errCorrupt = errors.New("damaged")

func validOID(s string) bool {
	if len(s) != 40 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}

// objects reads and writes the objects of one git directory.
type objects struct {
	dir string // the git directory
	// batch is `git cat-file --batch`, started for an object that is
	// not loose (packed by hand, or by git for a file larger than
	// core.bigFileThreshold); nil until then.
	batch *catFile
	// start starts batch.
	start func() (*catFile, error)
}

func (o *objects) close() {
	if o.batch != nil {
		o.batch.close()
		o.batch = nil
	}
}

func (o *objects) loosePath(oid string) string {
	return filepath.Join(o.dir, "objects", oid[:2], oid[2:])
}

// objectReader streams an object's content and, at its end, checks
// that the content is what the object's name says.
type objectReader struct {
	oid    string
	r      io.Reader
	h      hash.Hash
	left   int64
	closer func(left int64) error
	done   bool
}

func (r *objectReader) Read(p []byte) (int, error) {
	if r.left == 0 {
		if !r.done {
			r.done = true
			if got := hex.EncodeToString(r.h.Sum(nil)); got != r.oid {
				return 0, &objectError{r.oid, fmt.Errorf("%w: its content hashes to %s", errCorrupt, got)}
			}
		}
		return 0, io.EOF
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	n, err := r.r.Read(p)
	r.h.Write(p[:n])
	r.left -= int64(n)
	if err == io.EOF && r.left > 0 {
		return n, &objectError{r.oid, fmt.Errorf("%w: %d bytes short", errCorrupt, r.left)}
	}
	if err == io.EOF {
		err = nil
	}
	if err != nil {
		return n, &objectError{r.oid, fmt.Errorf("%w: %v", errCorrupt, err)}
	}
	return n, nil
}

func (r *objectReader) Close() error {
	if r.closer == nil {
		return nil
	}
	c := r.closer
	r.closer = nil
	return c(r.left)
}

// open starts reading an object: its type, and a reader of its
// content that fails at the end if the content does not match.
func (o *objects) open(oid string) (*objectReader, string, error) {
	if !validOID(oid) {
		return nil, "", &objectError{oid, errors.New("not an object name")}
	}
	f, err := os.Open(o.loosePath(oid))
	if errors.Is(err, fs.ErrNotExist) {
		return o.openBatch(oid)
	}
	if err != nil {
		return nil, "", &objectError{oid, err}
	}
	zr, err := zlib.NewReader(bufio.NewReader(f))
	if err != nil {
		f.Close()
		return nil, "", &objectError{oid, fmt.Errorf("%w: %v", errCorrupt, err)}
	}
	br := bufio.NewReader(zr)
	head, err := br.ReadString(0)
	if err != nil {
		f.Close()
		return nil, "", &objectError{oid, fmt.Errorf("%w: no header", errCorrupt)}
	}
	typ, size, ok := parseHeader(strings.TrimSuffix(head, "\x00"))
	if !ok {
		f.Close()
		return nil, "", &objectError{oid, fmt.Errorf("%w: bad header %q", errCorrupt, clip(head, 40))}
	}
	h := newHash(typ, size)
	return &objectReader{oid: oid, r: br, h: h, left: size, closer: func(int64) error { zr.Close(); return f.Close() }}, typ, nil
}

// newHash is the hash of an object's name, fed its header.
func newHash(typ string, size int64) hash.Hash {
	h := sha1.New()
	fmt.Fprintf(h, "%s %d\x00", typ, size)
	return h
}

func parseHeader(s string) (typ string, size int64, ok bool) {
	typ, n, found := strings.Cut(s, " ")
	if !found {
		return "", 0, false
	}
	switch typ {
	case "blob", "tree", "commit", "tag":
	default:
		return "", 0, false
	}
	size, err := strconv.ParseInt(n, 10, 64)
	if err != nil || size < 0 {
		return "", 0, false
	}
	return typ, size, true
}

// read returns an object of the wanted type whole (trees, commits,
// permission lists).
func (o *objects) read(oid, want string) ([]byte, error) {
	r, typ, err := o.open(oid)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if typ != want {
		return nil, &objectError{oid, fmt.Errorf("%w: a %s, not a %s", errCorrupt, typ, want)}
	}
	if r.left > maxMetaObject {
		return nil, &objectError{oid, fmt.Errorf("a %s of %d bytes is more than guardrun reads", typ, r.left)}
	}
	b := make([]byte, 0, r.left)
	buf := bytes.NewBuffer(b)
	if _, err := io.Copy(buf, r); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// verify reads an object through and checks its content.
func (o *objects) verify(oid string) error {
	r, _, err := o.open(oid)
	if err != nil {
		return err
	}
	defer r.Close()
	_, err = io.Copy(io.Discard, r)
	return err
}

// write stores an object in the loose format and returns its name. An
// object already there is left as it is.
func (o *objects) write(typ string, content []byte) (string, error) {
	head := fmt.Sprintf("%s %d\x00", typ, len(content))
	h := sha1.New()
	h.Write([]byte(head))
	h.Write(content)
	oid := hex.EncodeToString(h.Sum(nil))
	p := o.loosePath(oid)
	if _, err := os.Lstat(p); err == nil {
		return oid, nil
	}
	var buf bytes.Buffer
	zw, _ := zlibWriters.Get().(*zlib.Writer)
	if zw == nil {
		zw = zlib.NewWriter(&buf)
	} else {
		zw.Reset(&buf)
	}
	zw.Write([]byte(head))
	zw.Write(content)
	err := zw.Close()
	zlibWriters.Put(zw)
	if err != nil {
		return "", err
	}
	if err := writeObjectFile(p, buf.Bytes()); err != nil {
		return "", err
	}
	return oid, nil
}

// zlibWriters are reused: a new one allocates its compressor's tables.
var zlibWriters sync.Pool

// writeObjectFile puts an object's bytes at p, read-only, through a
// temporary file renamed into place (a reader sees all of it or
// nothing), making its directory where missing.
func writeObjectFile(p string, data []byte) error {
	var rnd [6]byte
	rand.Read(rnd[:])
	tmp := filepath.Join(filepath.Dir(p), "tmp_obj_"+hex.EncodeToString(rnd[:]))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o400)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.Mkdir(filepath.Dir(p), 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		f, err = os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o400)
	}
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if err := errors.Join(werr, f.Close()); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// treeEntry is one entry of a tree object.
type treeEntry struct {
	mode uint32 // 040000, 0100644, 0100755, 0120000, 0160000
	name string
	oid  string
}

const (
	modeTree    = 0o040000
	modeFile    = 0o100644
	modeExec    = 0o100755
	modeSymlink = 0o120000
	modeGitlink = 0o160000
)

// parseTree reads a tree object's entries.
func parseTree(oid string, b []byte) ([]treeEntry, error) {
	var out []treeEntry
	for len(b) > 0 {
		sp := bytes.IndexByte(b, ' ')
		if sp < 0 {
			return nil, &objectError{oid, fmt.Errorf("%w: bad tree entry", errCorrupt)}
		}
		mode, err := strconv.ParseUint(string(b[:sp]), 8, 32)
		if err != nil {
			return nil, &objectError{oid, fmt.Errorf("%w: bad tree entry mode", errCorrupt)}
		}
		b = b[sp+1:]
		nul := bytes.IndexByte(b, 0)
		if nul < 0 || len(b) < nul+1+20 {
			return nil, &objectError{oid, fmt.Errorf("%w: bad tree entry", errCorrupt)}
		}
		name := string(b[:nul])
		if name == "" || name == "." || name == ".." || strings.ContainsRune(name, '/') {
			return nil, &objectError{oid, fmt.Errorf("%w: bad name %q in a tree", errCorrupt, clip(name, 40))}
		}
		out = append(out, treeEntry{mode: uint32(mode), name: name, oid: hex.EncodeToString(b[nul+1 : nul+21])})
		b = b[nul+21:]
	}
	return out, nil
}

// tree reads a tree's entries; the empty tree needs no object.
func (o *objects) tree(oid string) ([]treeEntry, error) {
	if oid == emptyTree {
		return nil, nil
	}
	b, err := o.read(oid, "tree")
	if err != nil {
		return nil, err
	}
	return parseTree(oid, b)
}

// subtree is the tree at the slash-separated path below the tree root
// ("" for root itself), or the empty tree where there is none.
func (o *objects) subtree(root, path string) (string, error) {
	oid := root
	if path == "" {
		return oid, nil
	}
	for _, name := range strings.Split(path, "/") {
		es, err := o.tree(oid)
		if err != nil {
			return "", err
		}
		next := ""
		for _, e := range es {
			if e.name == name && e.mode == modeTree {
				next = e.oid
				break
			}
		}
		if next == "" {
			return emptyTree, nil
		}
		oid = next
	}
	return oid, nil
}

// commitTree is the tree a commit records.
func (o *objects) commitTree(oid string) (string, error) {
	b, err := o.read(oid, "commit")
	if err != nil {
		return "", err
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	t, ok := bytes.CutPrefix(line, []byte("tree "))
	if !ok || !validOID(string(t)) {
		return "", &objectError{oid, fmt.Errorf("%w: a commit without a tree", errCorrupt)}
	}
	return string(t), nil
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// writeFileAtomic writes data to path through a temporary file renamed
// over it. A checkpoint's records are not synced, like its objects: a
// reader never sees one half written, but a crash can lose the newest
// or leave one empty or cut short.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	return atomicfile.Replace(path, data, atomicfile.Options{Perm: perm})
}

// writeTrees writes the tree objects of index entries (sorted by path,
// as the index keeps them) and returns the top tree and the tree at
// prefix: what `git write-tree` does, without reading and rewriting
// the index once more.
func (o *objects) writeTrees(entries []indexEntry, prefix string) (top, sub string, err error) {
	type entry struct {
		mode uint32
		name string
		oid  [20]byte
	}
	type node struct {
		entries []entry
		dirs    map[string]*node
	}
	root := &node{}
	for _, e := range entries {
		n := root
		p := e.path
		for {
			dir, rest, ok := strings.Cut(p, "/")
			if !ok {
				break
			}
			c := n.dirs[dir]
			if c == nil {
				c = &node{}
				if n.dirs == nil {
					n.dirs = map[string]*node{}
				}
				n.dirs[dir] = c
			}
			n, p = c, rest
		}
		n.entries = append(n.entries, entry{mode: e.mode, name: p, oid: e.oid})
	}
	var buf bytes.Buffer
	var write func(n *node, at string) ([20]byte, error)
	write = func(n *node, at string) ([20]byte, error) {
		es := n.entries
		for name, c := range n.dirs {
			oid, err := write(c, path.Join(at, name))
			if err != nil {
				return oid, err
			}
			es = append(es, entry{mode: modeTree, name: name, oid: oid})
		}
		// git's order: names compared bytewise, a tree's as if it
		// ended in "/".
		if len(n.dirs) > 0 {
			key := func(e entry) string {
				if e.mode == modeTree {
					return e.name + "/"
				}
				return e.name
			}
			slices.SortFunc(es, func(a, b entry) int { return strings.Compare(key(a), key(b)) })
		}
		buf.Reset()
		for _, e := range es {
			buf.WriteString(strconv.FormatUint(uint64(e.mode), 8))
			buf.WriteByte(' ')
			buf.WriteString(e.name)
			buf.WriteByte(0)
			buf.Write(e.oid[:])
		}
		var raw [20]byte
		oid, err := o.write("tree", buf.Bytes())
		if err != nil {
			return raw, err
		}
		hex.Decode(raw[:], []byte(oid))
		if at == prefix {
			sub = oid
		}
		return raw, nil
	}
	raw, err := write(root, "")
	if err != nil {
		return "", "", err
	}
	if sub == "" {
		sub = emptyTree
	}
	return hex.EncodeToString(raw[:]), sub, nil
}
