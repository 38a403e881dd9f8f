// Package notify serves system calls of a sandboxed command in guardrun:
// seccomp user notifications (SECCOMP_RET_USER_NOTIF). It is used for
// what neither Landlock nor a deny-list filter can judge, because the
// answer depends on the path or object behind a pointer: the file
// metadata calls under landlock (MetadataServer), the entries of the
// directories Landlock must keep fixed (FileServer, with package
// landlock's served directories), and run-time verification of a
// pre-approved request under either Linux backend (Verifier: every exec
// and write-like call judged against a sandbox.Prediction).
//
// The pieces, in the order they are used:
//
//   - Registry: the system calls routed to user space and the Handler
//     for each. A command has one (landlock.Cmd.Notify).
//   - seccomp.BuildRoutes(policy, registry.Routes()): the command's
//     filter, with those calls answered SECCOMP_RET_USER_NOTIF, and their
//     numbers.
//   - The filter is loaded on the restricted thread with
//     SECCOMP_FILTER_FLAG_NEW_LISTENER; the kernel returns the listener
//     descriptor, close-on-exec, so the command never holds it.
//   - Serve(listener, registry, numbers): a Server reads notifications in
//     guardrun (unrestricted) and runs each Handler on a worker thread
//     that has no capabilities, as the command has none, and a working
//     directory and umask of its own; Stop ends it when the command has
//     been waited for.
//
// A Registry routes a call on every use (Handle) or only when its
// arguments meet a condition the filter can test (HandleWhen: an open
// with a write or create flag, a mknod of no device), so that what needs
// no judgement (an open for reading) stays in the kernel.
//
// # The servers
//
//   - FileServer serves FileCalls (the opens that may write or create,
//     creat, truncate, mkdir, mknod, unlink, rmdir, rename, link, symlink
//     in every form): DecodeFile reads the call once, Locate resolves its
//     paths as the caller's kernel would (from guardrun's root, or inside
//     the caller's root through /proc/PID/root for another mount
//     namespace; following no magic link but the caller's own
//     /proc/self/..., /dev/fd/N, /dev/std*; a link at a path's end
//     followed where the kernel follows one, so that what is judged is
//     where it leads), the backend's Decide says whether and where the
//     call is made, and Perform makes it through guardrun's descriptor of
//     the directory resolved and a plain name, never following a link at
//     the name; a new descriptor is installed in the caller with the
//     answer (SECCOMP_IOCTL_NOTIF_ADDFD, SECCOMP_ADDFD_FLAG_SEND).
//     HandleBind serves a verified command's binds the same way: a unix
//     socket's file on a path is judged as a create and bound on
//     guardrun's duplicate of the socket.
//   - MetadataServer serves MetadataCalls: the object opened once and
//     judged (Judge), the call made on guardrun's descriptor of it.
//   - Verifier (with Verify, the prediction and who is asked) serves
//     ExecCalls and judges file and metadata calls for a verified
//     command; see HandleExec and ExecSafe.
//
// # Adding a handler
//
// Register the system call by name before the command starts:
//
//	err := cmd.Notify.Handle("connect", func(r *notify.Request) notify.Response {
//		fd, err := r.GetFD(r.FDArg(0)) // the caller's socket, as guardrun's own
//		...
//		return notify.Value(0) // or notify.Fail(syscall.ECONNREFUSED)
//	})
//
// The handler must do the call itself and return its result: Response
// has no way to let the kernel carry on with the original call
// (SECCOMP_USER_NOTIF_FLAG_CONTINUE), because the kernel would read the
// arguments again from the caller's memory, which another thread of the
// caller can change between the handler's look and the kernel's
// (TOCTOU). The one exception is an exec, which guardrun cannot make for
// the caller: Request.ContinueExec, given only after ExecSafe has shown
// that nothing but the caller can change what was read (one thread,
// single-threaded vfork parents, private memory of its own or of files
// the sandbox cannot write; the verified filter refuses the other ways to
// share it), and for any other call answered EPERM. Read what is behind
// a pointer once, with the Request's helpers, and act on that copy:
//
//   - ReadPath, ReadString, ReadBytes copy from the caller's memory
//     (process_vm_readv, else /proc/PID/mem), bounded (PathMax, MaxRead),
//     and check afterwards that the call is still waiting
//     (SECCOMP_IOCTL_NOTIF_ID_VALID), so that what was read is the
//     caller's and not a recycled pid's;
//   - Dir (the caller's working directory or a dirfd), PathFD (the
//     object behind a descriptor argument) and Open (a path as the
//     caller's kernel would resolve it, /proc/self rewritten to the
//     caller's) return guardrun's own O_PATH descriptors through
//     /proc/PID, without pidfd_getfd;
//   - GetFD duplicates a caller's descriptor (pidfd_getfd), for a handler
//     that needs the open file description itself (a socket).
//
// A handler that fails must fail the call (Fail; EPERM when unsure). A
// name can have only one handler, and a name the deny rules of package
// seccomp refuse cannot be routed (BuildRoutes says so). Handlers run
// concurrently (at most MaxWorkers at once) and must not block for long:
// the caller waits, and Stop waits for them.
//
// # Limitations
//
//   - A task can be under only one filter with a listener: if guardrun
//     itself already is (run inside another sandbox that serves system
//     calls, such as guardrun's own landlock backend), the kernel refuses
//     the listener (EBUSY) and the landlock backend refuses to start; and
//     a command inside cannot use seccomp notifications itself (its
//     NEW_LISTENER fails with EBUSY).
//   - If guardrun stops serving (Stop, or guardrun killed), every routed
//     call fails with ENOSYS. Processes the command left behind that
//     outlive guardrun get ENOSYS for them.
//   - Reading the caller's memory and descriptors needs ptrace access to
//     it: the handlers have the command's user and no capabilities, which
//     is enough for the command's own processes unless one has made itself
//     undumpable (then its calls fail with EPERM). Under Yama's
//     ptrace_scope 1, only descendants of guardrun can be read: a process
//     the command detached and that was reparented out of guardrun's tree
//     gets EPERM. ptrace_scope 3 makes every routed call fail with EPERM.
//   - pidfd_getfd (GetFD) is refused by Docker's default seccomp profile
//     unless the container has CAP_SYS_PTRACE; process_vm_readv and
//     /proc/PID are allowed there (kernel 4.8 and later), so the path
//     helpers work in Docker and GetFD says why it fails.
//   - A caller interrupted by a signal before guardrun answers makes the
//     call again (the kernel restarts it) while the handler may already
//     have acted: handlers should do what is idempotent, as the metadata
//     calls are (an exclusive create made twice is EEXIST the second
//     time). With SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (Linux 5.19,
//     used where available) only fatal signals interrupt a call guardrun
//     has received.
//   - Locate follows no magic link but the caller's own spelled as
//     /proc/self, /proc/thread-self, /dev/fd or /dev/std*: a path through
//     /proc/PID/fd/N of another process, or through /proc/self spelled
//     otherwise, is EACCES where the kernel would have followed it.
//     FileServer needs openat2 (Linux 5.6) and ADDFD with SEND (5.14).
//   - A verified exec goes on only as ExecSafe allows: a multi-threaded
//     program cannot exec (EPERM, recorded with why). The program must
//     lie in a tree the sandbox cannot write to go on without a question.
//     kcmp (CONFIG_KCMP) must be there to compare a vfork parent's memory.
package notify
