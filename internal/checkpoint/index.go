package checkpoint

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// indexEntry is what a snapshot needs of one entry of git's index: the
// path (relative to the work tree), the object and its mode, and the
// size git last saw.
type indexEntry struct {
	path string
	mode uint32
	oid  [20]byte
	size uint32 // the file's size modulo 2^32, as git keeps it
	// ctime and ino are the stat data git compared the file with: the
	// same values mean git found the inode unchanged since.
	ctime, ctimeNs, ino uint32
}

// readIndex parses the store's private index (versions 2 to 4; git
// writes what the store's config asks, version 2, or 3 where an entry
// needs extended flags). A missing index has no entries.
func readIndex(path string) ([]indexEntry, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	bad := func(what string) error { return fmt.Errorf("index %s: %s", path, what) }
	if len(b) < 12 || string(b[:4]) != "DIRC" {
		return nil, bad("not a git index")
	}
	version := binary.BigEndian.Uint32(b[4:8])
	if version < 2 || version > 4 {
		return nil, bad(fmt.Sprintf("version %d", version))
	}
	n := binary.BigEndian.Uint32(b[8:12])
	if uint64(n) > uint64(len(b))/62 {
		return nil, bad("more entries than the file can hold")
	}
	out := make([]indexEntry, 0, n)
	off := 12
	prev := ""
	for i := uint32(0); i < n; i++ {
		start := off
		if len(b) < off+62 {
			return nil, bad("cut short")
		}
		ctime := binary.BigEndian.Uint32(b[off:])
		ctimeNs := binary.BigEndian.Uint32(b[off+4:])
		ino := binary.BigEndian.Uint32(b[off+20:])
		mode := binary.BigEndian.Uint32(b[off+24:])
		size := binary.BigEndian.Uint32(b[off+36:])
		var oid [20]byte
		copy(oid[:], b[off+40:off+60])
		flags := binary.BigEndian.Uint16(b[off+60:])
		off += 62
		if flags&0x4000 != 0 {
			if version < 3 {
				return nil, bad("extended flags in version 2")
			}
			off += 2
		}
		var path string
		if version == 4 {
			strip, k := binary.Uvarint(b[off:])
			if k <= 0 || strip > uint64(len(prev)) {
				return nil, bad("bad path compression")
			}
			off += k
			nul := bytes.IndexByte(b[off:], 0)
			if nul < 0 {
				return nil, bad("cut short")
			}
			path = prev[:len(prev)-int(strip)] + string(b[off:off+nul])
			off += nul + 1
		} else {
			nul := bytes.IndexByte(b[off:], 0)
			if nul < 0 {
				return nil, bad("cut short")
			}
			path = string(b[off : off+nul])
			// Entries are padded with 1 to 8 NULs to a multiple of 8.
			off = start + (off+nul-start+8)&^7
		}
		if off > len(b) {
			return nil, bad("cut short")
		}
		prev = path
		if stage := (flags >> 12) & 3; stage != 0 {
			continue
		}
		out = append(out, indexEntry{path: path, mode: mode, oid: oid, size: size, ctime: ctime, ctimeNs: ctimeNs, ino: ino})
	}
	return out, nil
}
