package ipc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// A frame is 4 bytes of magic, which say what the payload is and in
// which version of its format, the payload's length as a little-endian
// uint32, and the payload. Descriptors (SCM_RIGHTS) come with a frame's
// first bytes. This package's messages are frames with the magic
// MessageMagic; `guardrun serve`'s request is a frame of its own magic,
// built by a C client.

// HeaderSize is the length of a frame's magic and length.
const HeaderSize = 8

// ErrTooLarge is a frame longer than the reader takes: its payload is
// not read, and the stream cannot go on past it.
var ErrTooLarge = errors.New("message too large")

// ErrNotFrame is a stream that does not start with the magic expected:
// another program, or another version of guardrun.
var ErrNotFrame = errors.New("not a guardrun message of this version")

// AppendFrame appends the frame of payload to dst.
func AppendFrame(dst []byte, magic string, payload []byte) []byte {
	if len(magic) != 4 {
		panic("ipc: a frame's magic is 4 bytes")
	}
	dst = append(dst, magic...)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(payload)))
	return append(dst, payload...)
}

// WriteFrame writes a whole frame (AppendFrame's) to c, with files
// passed on its first bytes.
func WriteFrame(c *net.UnixConn, frame []byte, files []*os.File) error {
	if len(files) == 0 {
		_, err := c.Write(frame)
		return err
	}
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	n, _, err := c.WriteMsgUnix(frame, unix.UnixRights(fds...), nil)
	runtime.KeepAlive(files)
	if err == nil && n < len(frame) {
		// A stream socket may take part of it; the descriptors went
		// with the first part.
		_, err = c.Write(frame[n:])
	}
	return err
}

// ReadFrame reads one frame from c that starts with magic and holds at
// most max bytes of payload, with the descriptors (at most maxFiles)
// that came with its first bytes. Descriptors past maxFiles, and all of
// them when the frame is refused, are closed; with maxFiles 0 the
// kernel drops any. io.EOF is a stream that ended before the frame's
// first byte, io.ErrUnexpectedEOF one that ended inside it.
func ReadFrame(c *net.UnixConn, magic string, max, maxFiles int) ([]byte, []*os.File, error) {
	if maxFiles <= 0 {
		p, err := ReadFrameFrom(c, magic, max)
		return p, nil, err
	}
	var hdr [HeaderSize]byte
	oob := make([]byte, unix.CmsgSpace(4*maxFiles))
	n, oobn, flags, _, err := c.ReadMsgUnix(hdr[:], oob)
	files, ferr := rights(oob[:oobn])
	fail := func(err error) ([]byte, []*os.File, error) {
		for _, f := range files {
			f.Close()
		}
		return nil, nil, err
	}
	switch {
	case err != nil:
		return fail(err)
	case ferr != nil:
		return fail(fmt.Errorf("descriptors: %w", ferr))
	case flags&unix.MSG_CTRUNC != 0 || len(files) > maxFiles:
		return fail(fmt.Errorf("more than %d descriptors came with a message", maxFiles))
	case n == 0:
		return fail(io.EOF)
	}
	p, err := readFrame(c, hdr, n, magic, max)
	if err != nil {
		return fail(err)
	}
	return p, files, nil
}

// ReadFrameFrom is ReadFrame from any reader, without descriptors.
func ReadFrameFrom(r io.Reader, magic string, max int) ([]byte, error) {
	var hdr [HeaderSize]byte
	return readFrame(r, hdr, 0, magic, max)
}

// readFrame reads the frame whose first n header bytes are in hdr.
func readFrame(r io.Reader, hdr [HeaderSize]byte, n int, magic string, max int) ([]byte, error) {
	if _, err := io.ReadFull(r, hdr[n:]); err != nil {
		if n > 0 && errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	if string(hdr[:4]) != magic {
		return nil, ErrNotFrame
	}
	size := binary.LittleEndian.Uint32(hdr[4:])
	if uint64(size) > uint64(max) {
		return nil, fmt.Errorf("%w: %d bytes, more than the %d taken here", ErrTooLarge, size, max)
	}
	p := make([]byte, size)
	if _, err := io.ReadFull(r, p); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return p, nil
}

// rights are the descriptors of SCM_RIGHTS control messages, as files.
func rights(oob []byte) ([]*os.File, error) {
	if len(oob) == 0 {
		return nil, nil
	}
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil, err
	}
	var files []*os.File
	var bad error
	for _, m := range msgs {
		fds, err := unix.ParseUnixRights(&m)
		if err != nil {
			bad = err
			continue
		}
		for _, fd := range fds {
			files = append(files, os.NewFile(uintptr(fd), "descriptor from peer"))
		}
	}
	return files, bad
}
