package bwrap

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/guardrun/guardrun/sandbox"
	"github.com/guardrun/guardrun/seccomp"
	"github.com/guardrun/guardrun/seccomp/notify"
)

// verifyArg is argv[1] of guardrun's own executable started inside the
// sandbox as the helper of a verified command (verify_cgo_linux.go):
// "EXE verifyArg FILTER-FD SOCKET-FD ARGV...".
const verifyArg = "\x01guardrun-verify-init"

// The descriptors a verified command's helper finds, inside: the
// filter it loads with a listener and its end of the socket it hands
// the listener to guardrun over. bwrap leaves them open (it closes only
// those it was told about).
const (
	VerifyFilterFD = 6
	VerifySocketFD = 7
)

// HandshakeTimeout bounds how long Start waits for a verified command's
// helper to hand over its listener.
var HandshakeTimeout = 30 * time.Second

// verified is what a verified command adds to a Cmd: the helper's filter
// and socket, and, from Start on, the server of the listener.
type verified struct {
	filter *os.File // the helper's filter (ExtraFiles)
	theirs *os.File // the helper's end of the socket (ExtraFiles)
	ours   *os.File
	reg    *notify.Registry
	nrs    map[int32]string
	srv    *notify.Server
}

// verifyRoutes are the calls a verified command's filter under pol
// routes under bwrap: its execs and writes, the binds the filter lets
// through, and the metadata calls.
func verifyRoutes(pol sandbox.SeccompPolicy) []seccomp.Route {
	var out []seccomp.Route
	for name, when := range notify.VerifyRoutes() {
		out = append(out, seccomp.Route{Name: name, Any: when})
	}
	if r, ok := seccomp.BindRoute(pol); ok {
		out = append(out, r)
	}
	for _, name := range notify.MetadataCalls {
		out = append(out, seccomp.Route{Name: name})
	}
	slices.SortFunc(out, func(a, b seccomp.Route) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out
}

// prepareVerify builds what a verified command under p needs: the
// helper's filter and the registry that serves it, and the socket.
func prepareVerify(p *sandbox.Profile, v *notify.Verify, cacheDir string) (*verified, error) {
	if !verifyAvailable {
		return nil, errors.New("bwrap: this guardrun was built without cgo and has no helper for verified commands")
	}
	pol := p.Seccomp
	pol.Verify = true
	f, nrs, err := seccomp.BuildRoutesCached(pol, verifyRoutes(pol), cacheDir)
	if err != nil {
		return nil, fmt.Errorf("bwrap: verified command's filter: %w", err)
	}
	file, err := f.File()
	f.Release()
	if err != nil {
		return nil, fmt.Errorf("bwrap: verified command's filter: %w", err)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		file.Close()
		return nil, fmt.Errorf("bwrap: verified command's socket: %w", err)
	}
	// Ours non-blocking, so that the handshake can time out; theirs
	// as it is, for the helper's plain reads.
	if err := unix.SetNonblock(fds[0], true); err != nil {
		file.Close()
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, err
	}
	vf := &verified{filter: file, ours: os.NewFile(uintptr(fds[0]), "verify"), theirs: os.NewFile(uintptr(fds[1]), "verify-helper"),
		reg: notify.NewRegistry(), nrs: nrs}
	view := notify.View{InRoot: true}
	vr := notify.NewVerifier(v, notify.VerifierConfig{
		View: view,
		Writable: func(path string) bool {
			_, w := p.Access(path)
			return w || privateTmp(p, path)
		},
		Always: func(path string) bool { return privateTmp(p, path) },
	})
	fs := &notify.FileServer{View: view, Decide: func(r *notify.Request, c *notify.FileCall, dst, src *notify.Located) (notify.Performer, error) {
		// Made on the worker, through the sandbox's own mounts (a
		// read-only bind says EROFS, a mask is what it masks with).
		return notify.Performer{}, vr.CheckFile(r, c, dst, src)
	}}
	for name, when := range notify.VerifyRoutes() {
		h := fs.Handle
		if slices.Contains(notify.ExecCalls, name) {
			h = vr.HandleExec
		}
		if err := vf.reg.HandleWhen(name, when, h); err != nil {
			vf.close()
			return nil, err
		}
	}
	if r, ok := seccomp.BindRoute(pol); ok {
		// A socket's file on a path is a create like any other.
		if err := vf.reg.HandleWhen(r.Name, r.Any, func(r *notify.Request) notify.Response { return fs.HandleBind(r, nil) }); err != nil {
			vf.close()
			return nil, err
		}
	}
	meta := &notify.MetadataServer{
		Open: func(r *notify.Request, dirfd int32, path string, nofollow bool) (int, error) {
			l, err := r.Locate(view, notify.Target{Dirfd: dirfd, Path: path, Follow: !nofollow}, false)
			if err != nil {
				return -1, err
			}
			defer l.Close()
			if l.Parent < 0 {
				return unix.FcntlInt(uintptr(l.Obj), unix.F_DUPFD_CLOEXEC, 0)
			}
			return unix.Openat(l.Parent, l.Name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		},
		Judge: func(r *notify.Request, fd int) error {
			if notify.OnProcfs(fd) {
				return syscall.EACCES
			}
			path, err := r.Path(view, &notify.Located{Parent: -1, Obj: fd})
			if err != nil {
				return err
			}
			return vr.CheckMetadata(r, path)
		},
	}
	if err := meta.Register(vf.reg); err != nil {
		vf.close()
		return nil, err
	}
	return vf, nil
}

// helperArgv is argv run behind the helper.
func helperArgv(argv []string) []string {
	return append([]string{BridgeExe, verifyArg, strconv.Itoa(VerifyFilterFD), strconv.Itoa(VerifySocketFD)}, argv...)
}

// handshake takes the helper's listener, starts serving it and tells the
// helper to go on. It gives up when the helper does not hand it over in
// HandshakeTimeout, or the sandbox ended (the socket's end of file).
func (vf *verified) handshake() error {
	vf.theirs.Close()
	vf.theirs = nil
	if err := vf.ours.SetReadDeadline(time.Now().Add(HandshakeTimeout)); err != nil {
		return fmt.Errorf("bwrap: the verified command's socket: %w", err)
	}
	rc, err := vf.ours.SyscallConn()
	if err != nil {
		return err
	}
	var listener int = -1
	var rerr error
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4))
	err = rc.Read(func(fd uintptr) bool {
		n, oobn, _, _, err := unix.Recvmsg(int(fd), buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err == unix.EAGAIN {
			return false
		}
		if err != nil {
			rerr = err
			return true
		}
		if n != 1 || buf[0] != 'L' {
			rerr = errors.New("the helper said nothing")
			return true
		}
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil || len(msgs) != 1 {
			rerr = errors.New("the helper sent no listener")
			return true
		}
		fds, err := unix.ParseUnixRights(&msgs[0])
		if err != nil || len(fds) != 1 {
			rerr = errors.New("the helper sent no listener")
			return true
		}
		listener = fds[0]
		return true
	})
	if err == nil {
		err = rerr
	}
	if err != nil {
		return fmt.Errorf("bwrap: the verified command's helper: %w", err)
	}
	srv, err := notify.Serve(listener, vf.reg, vf.nrs)
	if err != nil {
		unix.Close(listener)
		return err
	}
	vf.srv = srv
	if _, err := vf.ours.Write([]byte{'K'}); err != nil {
		return fmt.Errorf("bwrap: the verified command's helper: %w", err)
	}
	vf.ours.Close()
	vf.ours = nil
	return nil
}

func (vf *verified) close() {
	if vf == nil {
		return
	}
	for _, f := range []*os.File{vf.filter, vf.theirs, vf.ours} {
		if f != nil {
			f.Close()
		}
	}
	vf.filter, vf.theirs, vf.ours = nil, nil, nil
	if vf.srv != nil {
		_ = vf.srv.Stop()
		vf.srv = nil
	}
}

// privateTmp reports whether path lies in the sandbox's own /tmp (a
// tmpfs of its own), not in a tree of the profile bound inside it.
func privateTmp(p *sandbox.Profile, path string) bool {
	if !p.PrivateTmp || !sandbox.Within(path, "/tmp") {
		return false
	}
	for _, l := range [][]string{p.ReadWrite, p.ReadOnly, p.Deny, p.ReadOnlyOver} {
		for _, e := range l {
			if sandbox.Within(e, "/tmp") && sandbox.Within(path, e) {
				return false
			}
		}
	}
	return true
}
