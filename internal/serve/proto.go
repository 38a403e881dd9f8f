package serve

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// The protocol's magic and version: the first four bytes of a request.
const magic = "GRS1"

// Replies and messages after the request (see the package doc).
const (
	msgFallback  = 'F'
	msgCommitted = 'R'
	msgExit      = 'X'
	msgSignal    = 'S'
)

// maxRequest bounds a request's payload: more than any argv and
// environment execve accepts here.
const maxRequest = 8 << 20

// wireRequest is what a client sends: its argv, its whole environment and
// its umask. Its stdin, stdout, stderr and working directory come along
// as descriptors.
type wireRequest struct {
	Argv    []string
	Environ []string
	Umask   uint32
}

// decodeRequest reads a request's payload, after the magic and its
// length: argc, then each argument as a length and its bytes; envc and
// each variable likewise; the umask. All numbers are little-endian
// uint32.
func decodeRequest(b []byte) (*wireRequest, error) {
	r := &wireRequest{}
	next := func() (uint32, error) {
		if len(b) < 4 {
			return 0, io.ErrUnexpectedEOF
		}
		v := binary.LittleEndian.Uint32(b)
		b = b[4:]
		return v, nil
	}
	strs := func(what string) ([]string, error) {
		n, err := next()
		if err != nil {
			return nil, fmt.Errorf("%s count: %w", what, err)
		}
		if uint64(n)*4 > uint64(len(b)) {
			return nil, fmt.Errorf("%s count %d: more than the request holds", what, n)
		}
		out := make([]string, 0, n)
		for i := uint32(0); i < n; i++ {
			l, err := next()
			if err != nil {
				return nil, fmt.Errorf("%s %d: %w", what, i, err)
			}
			if uint64(l) > uint64(len(b)) {
				return nil, fmt.Errorf("%s %d: length %d past the end", what, i, l)
			}
			out = append(out, string(b[:l]))
			b = b[l:]
		}
		return out, nil
	}
	var err error
	if r.Argv, err = strs("argument"); err != nil {
		return nil, err
	}
	if r.Environ, err = strs("variable"); err != nil {
		return nil, err
	}
	if r.Umask, err = next(); err != nil {
		return nil, fmt.Errorf("umask: %w", err)
	}
	if len(b) != 0 {
		return nil, errors.New("bytes after the umask")
	}
	return r, nil
}

// exitMessage is the X message with code.
func exitMessage(code int) []byte {
	return binary.LittleEndian.AppendUint32([]byte{msgExit}, uint32(int32(code)))
}
