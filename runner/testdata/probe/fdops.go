package main

// Attempts to change a file through a descriptor opened read-only (what
// Landlock and a read-only bind let a command open in a read-only zone),
// by ioctls and by the calls that write a descriptor's data without
// write(2); and the calls that reach files by handle or watch a whole
// file system.

import (
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

func init() {
	for name, f := range map[string]func([]string) error{
		"ioctl-ro":   attemptIoctlRO,
		"fd-write":   attemptFDWrite,
		"handle":     attemptHandle,
		"fanotify":   attemptFanotify,
		"shm-open":   attemptShmOpen,
		"lease-junk": attemptLeaseJunk,
	} {
		attempts[name] = f
	}
}

// ioctl-ro PATH REQUEST [dir|file] [vol-args:NAME|u32:N]: open PATH
// read-only (as a directory with dir) and make the ioctl REQUEST
// (hexadecimal, the upper 32 bits included: the kernel reads only the
// lower ones) on it with a zeroed argument, or btrfs's struct
// btrfs_ioctl_vol_args naming NAME (and the descriptor itself as its
// fd), or one whose first 32 bits are N (a struct's version). Any
// success is reported.
func attemptIoctlRO(a []string) error {
	req, err := strconv.ParseUint(arg(a, 1), 0, 64)
	if err != nil {
		return setup("request %q", arg(a, 1))
	}
	flags := unix.O_RDONLY | unix.O_NONBLOCK | unix.O_CLOEXEC | unix.O_NOFOLLOW
	if arg(a, 2) == "dir" {
		flags |= unix.O_DIRECTORY
	}
	fd, err := unix.Open(arg(a, 0), flags, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var buf [4096]byte
	if name, ok := strings.CutPrefix(arg(a, 3), "vol-args:"); ok {
		*(*int64)(unsafe.Pointer(&buf[0])) = int64(fd)
		copy(buf[8:], name)
	}
	if v, ok := strings.CutPrefix(arg(a, 3), "u32:"); ok {
		n, _ := strconv.ParseUint(v, 0, 32)
		*(*uint32)(unsafe.Pointer(&buf[0])) = uint32(n)
	}
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(unsafe.Pointer(&buf[0]))); e != 0 {
		return e
	}
	return allowed("ioctl %#x on a read-only descriptor of %s", req, arg(a, 0))
}

// fd-write PATH SRC WAY: write SRC's bytes into PATH through a
// read-only descriptor of PATH, one way: copy_file_range, sendfile,
// splice (from a pipe), fallocate (punch a hole, zero a range),
// FICLONE, FICLONERANGE, FIDEDUPERANGE, or the space ioctls
// (FS_IOC_ZERO_RANGE, FS_IOC_UNRESVSP64).
func attemptFDWrite(a []string) error {
	dst, err := unix.Open(arg(a, 0), unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer unix.Close(dst)
	src, err := unix.Open(arg(a, 1), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return setup("source %s: %v", arg(a, 1), err)
	}
	defer unix.Close(src)
	done := func(err error) error {
		if err != nil {
			return err
		}
		return allowed("%s into a read-only descriptor of %s", arg(a, 2), arg(a, 0))
	}
	// struct space_resv / file_clone_range / file_dedupe_range.
	type spaceResv struct {
		whence    int16
		_         int16
		_         int32
		start, ln int64
		sysid     int32
		pid       uint32
		_         [4]int32
	}
	switch arg(a, 2) {
	case "copy_file_range":
		_, err := unix.CopyFileRange(src, nil, dst, nil, 4, 0)
		return done(err)
	case "sendfile":
		_, err := unix.Sendfile(dst, src, nil, 4)
		return done(err)
	case "splice":
		var p [2]int
		if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
			return setup("pipe: %v", err)
		}
		defer unix.Close(p[0])
		defer unix.Close(p[1])
		unix.Write(p[1], []byte("xxxx"))
		_, err := unix.Splice(p[0], nil, dst, nil, 4, 0)
		return done(err)
	case "punch-hole":
		return done(unix.Fallocate(dst, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, 0, 4096))
	case "zero-range":
		return done(unix.Fallocate(dst, unix.FALLOC_FL_ZERO_RANGE, 0, 4096))
	case "ficlone":
		return done(unix.IoctlFileClone(dst, src))
	case "ficlonerange":
		return done(unix.IoctlFileCloneRange(dst, &unix.FileCloneRange{Src_fd: int64(src), Src_length: 0}))
	case "fideduperange":
		r := unix.FileDedupeRange{Src_offset: 0, Src_length: 4096, Info: []unix.FileDedupeRangeInfo{{Dest_fd: int64(dst)}}}
		if err := unix.IoctlFileDedupeRange(src, &r); err != nil {
			return err
		}
		if r.Info[0].Status < 0 {
			return unix.Errno(-r.Info[0].Status)
		}
		return allowed("FIDEDUPERANGE into a read-only descriptor of %s: status %d, %d bytes", arg(a, 0), r.Info[0].Status, r.Info[0].Bytes_deduped)
	case "zero-range-ioctl", "unresvsp":
		req := uintptr(0x40305839) // FS_IOC_ZERO_RANGE, _IOW('X', 57, struct space_resv)
		if arg(a, 2) == "unresvsp" {
			req = 0x4030582b // FS_IOC_UNRESVSP64, _IOW('X', 43, ...)
		}
		r := spaceResv{start: 0, ln: 4096}
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(dst), req, uintptr(unsafe.Pointer(&r))); e != 0 {
			return e
		}
		return done(nil)
	}
	return setup("way %q", arg(a, 2))
}

// handle PATH: name_to_handle_at, then open_by_handle_at for writing
// (reaching a file by its handle, past every path rule).
func attemptHandle(a []string) error {
	h, mount, err := unix.NameToHandleAt(unix.AT_FDCWD, arg(a, 0), 0)
	if err != nil {
		return err
	}
	mfd, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return setup("open /: %v", err)
	}
	defer unix.Close(mfd)
	fd, err := unix.OpenByHandleAt(mfd, h, unix.O_RDWR)
	if err != nil {
		return allowed("name_to_handle_at on %s (mount %d); open_by_handle_at: %v", arg(a, 0), mount, err)
	}
	unix.Close(fd)
	return allowed("opened %s by its handle for writing", arg(a, 0))
}

// fanotify PATH: watch PATH's whole file system for opens and writes.
func attemptFanotify(a []string) error {
	fd, err := unix.FanotifyInit(unix.FAN_CLASS_NOTIF|unix.FAN_CLOEXEC, unix.O_RDONLY)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.FanotifyMark(fd, unix.FAN_MARK_ADD|unix.FAN_MARK_FILESYSTEM, unix.FAN_OPEN|unix.FAN_MODIFY, unix.AT_FDCWD, arg(a, 0)); err != nil {
		return allowed("fanotify_init; the mark on %s: %v", arg(a, 0), err)
	}
	return allowed("watches the file system of %s", arg(a, 0))
}

// shm-open PATH: open a host POSIX shared memory object (/dev/shm/NAME)
// for reading and writing, and write to it.
func attemptShmOpen(a []string) error {
	fd, err := unix.Open(arg(a, 0), unix.O_RDWR|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		rfd, rerr := unix.Open(arg(a, 0), unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if rerr != nil {
			return err
		}
		unix.Close(rfd)
		return allowed("opened the host's shared memory %s for reading", arg(a, 0))
	}
	defer unix.Close(fd)
	if _, err := unix.Pwrite(fd, []byte("written from inside the sandbox"), 0); err != nil {
		return allowed("opened the host's shared memory %s for writing (write: %v)", arg(a, 0), err)
	}
	return allowed("wrote the host's shared memory %s", arg(a, 0))
}

// lease-junk PATH: F_SETLEASE with junk in the upper 32 bits of the
// command, which the kernel does not read.
func attemptLeaseJunk(a []string) error {
	fd, err := openRO(arg(a, 0))
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	cmd := uintptr(unix.F_SETLEASE) | 0x5a5a<<32
	if _, _, e := unix.Syscall(unix.SYS_FCNTL, uintptr(fd), cmd, unix.F_RDLCK); e != 0 {
		return e
	}
	return allowed("holds a read lease on %s (command %#x)", arg(a, 0), cmd)
}

func init() { attempts["tiocsetd"] = attemptTIOCSETD }

// tiocsetd DISC: set the line discipline of the terminal on stdin (the
// host's) to DISC, 27 (N_NULL) by default: input and output then go
// nowhere, after the command too, and the discipline's own code (PPP,
// HDLC, serial CAN or Bluetooth on other numbers) runs on the person's
// terminal. Junk in the request's upper 32 bits is tried too.
func attemptTIOCSETD(a []string) error {
	disc := 27
	if d, err := strconv.Atoi(arg(a, 0)); err == nil {
		disc = d
	}
	var last error
	for _, req := range []uint64{unix.TIOCSETD, 0xdeadbeef_00000000 | unix.TIOCSETD} {
		d := int32(disc)
		_, _, e := unix.Syscall(unix.SYS_IOCTL, 0, uintptr(req), uintptr(unsafe.Pointer(&d)))
		if e == 0 {
			return allowed("set the line discipline of the host's terminal to %d (request %#x)", disc, req)
		}
		last = e
	}
	return last
}
