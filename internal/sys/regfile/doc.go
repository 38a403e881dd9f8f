// Package regfile opens a file that must be a regular file, and opens
// nothing else.
//
// guardrun reads small files in places a sandboxed command may write: a
// project's .guardrun.yaml, the user config, a workspace's git pointer
// files. Any of them can have been replaced by a FIFO, whose open waits
// for a writer (and with it guardrun, or one request of `guardrun
// serve`), or by a symbolic link to a device, whose open alone can act:
// a tape rewinds on close, a watchdog arms, a modem hangs up. Open looks
// at what the path names before opening it for reading.
//
// On Linux the path is first opened with O_PATH, which reads nothing and
// runs no driver code; a file that is not regular is refused there, and
// a regular one is opened for reading through /proc/self/fd, which
// reaches the inode already looked at rather than whatever the path names
// by then. Where /proc is not mounted, and on other systems, it is opened
// without waiting (O_NONBLOCK) and checked once open, and (Linux) must be
// the inode the O_PATH look saw.
//
// A regular file of the kernel's interfaces (proc, sysfs, tracefs...) is
// refused too: /proc/kmsg waits and, read by root, takes the system
// log's messages; /proc/self/environ holds guardrun's own secrets. The
// reopen is made without waiting as well, so that a file under another
// process's write lease is refused rather than waited on for up to
// lease-break-time.
//
// Like open(2), Open follows symbolic links: the callers' files may be
// links by choice (a dotfiles repository). OpenNoFollow refuses a last
// component that is one, for a file a command may have put in place and
// that guardrun reads before it trusts it (a project file).
package regfile
