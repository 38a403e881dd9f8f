package checkpoint

import (
	"bytes"
	"encoding/binary"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"
)

// The permission cache spares a snapshot an lstat of every file: git's
// index keeps the ctime and inode number git last found a file with,
// and git status compares them with the file's own, refreshing the
// index when they differ. chmod changes the ctime. So a file whose
// index entry holds the same ctime and inode as when guardrun last read
// its permissions has the same permissions; only the others are read
// again. Entries whose ctime falls within racyWindow of the cache's
// writing are read again too (a file system that keeps ctimes in whole
// seconds can change one twice within the same second).
//
// The cache is a list sorted by path, as the index is, read alongside
// the index's entries without building a map.

const (
	permCacheMagic = "guardrun-perms 2\n"
	racyWindow     = 2 * time.Second
)

type permKey struct{ ctime, ctimeNs, ino uint32 }

type permCache struct {
	written time.Time
	b       []byte // the records still ahead
	n       int    // how many records in all
}

// readPermCache reads the cache; an unreadable one is empty.
func readPermCache(path string) *permCache {
	c := &permCache{}
	b, err := os.ReadFile(path)
	if err != nil || !bytes.HasPrefix(b, []byte(permCacheMagic)) || len(b) < len(permCacheMagic)+12 {
		return c
	}
	b = b[len(permCacheMagic):]
	c.written = time.Unix(0, int64(binary.BigEndian.Uint64(b)))
	c.n = int(binary.BigEndian.Uint32(b[8:]))
	c.b = b[12:]
	return c
}

// next is the record at the front: its path (aliasing the cache's
// bytes), key and permission; ok is false at the end or at a cut one.
func (c *permCache) next() (p []byte, key permKey, perm fs.FileMode, ok bool) {
	if len(c.b) < 2 {
		return nil, permKey{}, 0, false
	}
	n := int(binary.BigEndian.Uint16(c.b))
	if len(c.b) < 2+n+16 {
		c.b = nil
		return nil, permKey{}, 0, false
	}
	r := c.b[2+n:]
	return c.b[2 : 2+n], permKey{binary.BigEndian.Uint32(r), binary.BigEndian.Uint32(r[4:]), binary.BigEndian.Uint32(r[8:])}, goPerm(binary.BigEndian.Uint32(r[12:])), true
}

func (c *permCache) skip() {
	n := int(binary.BigEndian.Uint16(c.b))
	c.b = c.b[2+n+16:]
}

// lookup is the cached permission of an index entry, if its stat data
// is what it was when the permission was read and not racily recent.
// Entries must be looked up in the index's order.
func (c *permCache) lookup(e indexEntry) (permKey, fs.FileMode, bool) {
	for {
		p, key, perm, ok := c.next()
		if !ok {
			return permKey{}, 0, false
		}
		switch cmp := strings.Compare(string(p), e.path); {
		case cmp < 0:
			c.skip()
			continue
		case cmp > 0:
			return permKey{}, 0, false
		}
		c.skip()
		if key == (permKey{}) || key != (permKey{e.ctime, e.ctimeNs, e.ino}) {
			return permKey{}, 0, false
		}
		if ct := time.Unix(int64(e.ctime), int64(e.ctimeNs)); !ct.Before(c.written.Add(-racyWindow)) {
			return permKey{}, 0, false
		}
		return key, perm, true
	}
}

// writePermCache writes the permissions of files (paths below the work
// tree, as the index names them), read at time now.
func writePermCache(path string, now time.Time, files []file) error {
	fs := slices.Clone(files)
	slices.SortFunc(fs, func(a, b file) int { return strings.Compare(a.path, b.path) })
	var b bytes.Buffer
	b.WriteString(permCacheMagic)
	var head [12]byte
	binary.BigEndian.PutUint64(head[:], uint64(now.UnixNano()))
	binary.BigEndian.PutUint32(head[8:], uint32(len(fs)))
	b.Write(head[:])
	var rec [18]byte
	for _, f := range fs {
		if len(f.path) > 0xffff || f.mode == modeSymlink {
			continue
		}
		binary.BigEndian.PutUint16(rec[0:], uint16(len(f.path)))
		b.Write(rec[:2])
		b.WriteString(f.path)
		binary.BigEndian.PutUint32(rec[2:], f.key.ctime)
		binary.BigEndian.PutUint32(rec[6:], f.key.ctimeNs)
		binary.BigEndian.PutUint32(rec[10:], f.key.ino)
		binary.BigEndian.PutUint32(rec[14:], unixPerm(f.perm))
		b.Write(rec[2:])
	}
	return writeFileAtomic(path, b.Bytes(), 0o600)
}
