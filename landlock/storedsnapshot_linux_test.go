package landlock

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"syscall"
	"testing"
)

// craftSnap wraps payload in a stored snapshot's header with a valid
// checksum, as a process writing the share directory could.
func craftSnap(payload []byte) []byte {
	b := make([]byte, shareHeader, shareHeader+len(payload))
	copy(b, shareMagic)
	b[len(shareMagic)] = shareVersion
	binary.LittleEndian.PutUint32(b[len(shareMagic)+1:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(b[len(shareMagic)+5:], crc32.ChecksumIEEE(payload))
	return append(b, payload...)
}

// craftNode appends a node's header (kind, mode, uid, gid, data, link)
// and its entry count, without the entries.
func craftNode(b []byte, kind uint32, data []byte, count uint32) []byte {
	for _, v := range []uint32{kind, 0o755, 0, 0} {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	b = appendBytes(b, data)
	b = appendBytes(b, nil)
	return binary.LittleEndian.AppendUint32(b, count)
}

func craftHead() []byte {
	b := appendBytes(nil, []byte("/w/.git/hooks"))
	return append(b, 2)
}

// TestCraftedStoredSnapshots: payloads with a valid checksum that a
// process able to write the share directory could store. Each is
// refused (or, where within the bounds, decoded) without a panic and
// without memory sized from a claimed count.
func TestCraftedStoredSnapshots(t *testing.T) {
	dir := uint32(syscall.S_IFDIR)
	reg := uint32(syscall.S_IFREG)
	rows := []struct {
		name  string
		build func() []byte
		ok    bool
	}{
		{"root claims 2^32-1 entries", func() []byte {
			return craftNode(craftHead(), dir, nil, 1<<32-1)
		}, false},
		{"root claims MaxWatchEntries+1", func() []byte {
			return craftNode(craftHead(), dir, nil, MaxWatchEntries+1)
		}, false},
		{"chain of nested directories to the entry budget", func() []byte {
			b := craftHead()
			for i := 0; i < MaxWatchEntries; i++ {
				b = craftNode(b, dir, nil, 1)
				b = appendBytes(b, []byte("d"))
			}
			return craftNode(b, dir, nil, 0)
		}, true},
		{"chain one past the entry budget", func() []byte {
			b := craftHead()
			for i := 0; i <= MaxWatchEntries; i++ {
				b = craftNode(b, dir, nil, 1)
				b = appendBytes(b, []byte("d"))
			}
			return craftNode(b, dir, nil, 0)
		}, false},
		{"budget spent, then a directory claims 2^31", func() []byte {
			b := craftNode(craftHead(), dir, nil, 2)
			b = appendBytes(b, []byte("a"))
			b = craftNode(b, dir, nil, MaxWatchEntries-1)
			for i := 0; i < MaxWatchEntries-1; i++ {
				b = appendBytes(b, []byte(fmt.Sprintf("f%03d", i)))
				b = craftNode(b, reg, nil, 0)
			}
			b = appendBytes(b, []byte("b"))
			return craftNode(b, dir, nil, 1<<31)
		}, false},
		{"file data past MaxWatchBytes spread over two files", func() []byte {
			half := make([]byte, MaxWatchBytes/2+1)
			b := craftNode(craftHead(), dir, nil, 2)
			b = appendBytes(b, []byte("a"))
			b = craftNode(b, reg, half, 0)
			b = appendBytes(b, []byte("b"))
			return craftNode(b, reg, half, 0)
		}, false},
		{"file length 2^32-1", func() []byte {
			b := craftHead()
			for _, v := range []uint32{reg, 0o644, 0, 0, 1<<32 - 1} {
				b = binary.LittleEndian.AppendUint32(b, v)
			}
			return b
		}, false},
		{"same name twice", func() []byte {
			b := craftNode(craftHead(), dir, nil, 2)
			b = appendBytes(b, []byte("a"))
			b = craftNode(b, reg, nil, 0)
			b = appendBytes(b, []byte("a"))
			return craftNode(b, reg, nil, 0)
		}, false},
		{"name with a slash", func() []byte {
			b := craftNode(craftHead(), dir, nil, 1)
			b = appendBytes(b, []byte("../x"))
			return craftNode(b, reg, nil, 0)
		}, false},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			_, err := decodeSnap(craftSnap(r.build()))
			if r.ok && err != nil {
				t.Fatalf("refused a snapshot within the bounds: %v", err)
			}
			if !r.ok && err == nil {
				t.Fatal("decoded; want it refused")
			}
		})
	}
}
