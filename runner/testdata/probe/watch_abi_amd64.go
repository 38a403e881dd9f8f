package main

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// int80 makes a system call through the i386 entry point (int 0x80).
func int80(nr, a1, a2, a3 uintptr) uintptr

// The i386 numbers of inotify_init and inotify_add_watch, and the x32
// bit of amd64.
const (
	i386InotifyInit     = 291
	i386InotifyAddWatch = 292
	x32Bit              = 0x40000000
)

var otherABIs = []string{"int80", "x32"}

// watchABIChild: one inotify_add_watch on OUT through ABI; the filter
// should have killed the process before it returns.
func watchABIChild(abi, out string) error {
	switch abi {
	case "int80":
		// Arguments are 32 bits wide: the path in the low 4 GiB.
		mem, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_32BIT)
		if err != nil {
			return setup("mmap MAP_32BIT: %v", err)
		}
		copy(mem, out+"\x00")
		ifd := int32(int80(i386InotifyInit, 0, 0, 0))
		fmt.Fprintf(os.Stderr, "int 0x80 inotify_init: %d\n", ifd)
		if ifd < 0 {
			return syscall.Errno(-ifd)
		}
		wd := int32(int80(i386InotifyAddWatch, uintptr(ifd), uintptr(unsafePointer(mem)), spyMask))
		if wd >= 0 {
			return allowed("int 0x80 inotify_add_watch(%s) gave wd %d", out, wd)
		}
		return syscall.Errno(-wd)
	case "x32":
		ifd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
		if err != nil {
			return setup("%v", err)
		}
		wd, _, e := unix.Syscall(x32Bit|unix.SYS_INOTIFY_ADD_WATCH, uintptr(ifd), uintptr(unsafePointer([]byte(out+"\x00"))), spyMask)
		if e == 0 {
			return allowed("x32 inotify_add_watch(%s) gave wd %d", out, wd)
		}
		return e
	}
	return setup("unknown ABI %q", abi)
}
