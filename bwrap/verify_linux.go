package bwrap

import (
	"fmt"
	"slices"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/guardrun/guardrun/sandbox"
	"github.com/guardrun/guardrun/seccomp"
	"github.com/guardrun/guardrun/seccomp/notify"
)

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

// verified is what a verified command adds to a Cmd: its helper, the
// registry that serves the listener the helper hands over, and, from
// Start on, the server of the listener.
type verified struct {
	helper *notify.Helper
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
	h, err := notify.NewHelper(file)
	if err != nil {
		return nil, fmt.Errorf("bwrap: %w", err)
	}
	vf := &verified{helper: h, reg: notify.NewRegistry(), nrs: nrs}
	view := notify.View{InRoot: true}
	vr := notify.NewVerifier(v, notify.VerifierConfig{
		View: view,
		Writable: func(path string) bool {
			_, w := p.Access(path)
			return w || privateTmp(p, path) || ownDev(path)
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
func (vf *verified) helperArgv(argv []string) []string {
	return vf.helper.Argv(BridgeExe, VerifyFilterFD, VerifySocketFD, argv)
}

// handshake takes the helper's listener and starts serving it.
func (vf *verified) handshake() error {
	srv, err := vf.helper.Handshake(vf.reg, vf.nrs, HandshakeTimeout)
	if err != nil {
		return fmt.Errorf("bwrap: %w", err)
	}
	vf.srv = srv
	return nil
}

func (vf *verified) close() {
	if vf == nil {
		return
	}
	vf.helper.Close()
	if vf.srv != nil {
		_ = vf.srv.Stop()
		vf.srv = nil
	}
}

// ownDev reports whether path lies in the sandbox's /dev, a tmpfs of
// its own (bwrap's --dev) that the command can write (/dev/shm, new
// names beside the devices), and is not one of the device nodes bwrap
// binds there or the terminals: opening those acts on the device, which
// the tmpfs does not hold.
func ownDev(path string) bool {
	if !sandbox.Within(path, "/dev") || sandbox.Within(path, "/dev/pts") {
		return false
	}
	return !slices.Contains(bwrapDevices, path)
}

// bwrapDevices are the nodes bwrap's --dev binds from the host (and
// /dev/console, the terminal it was started on).
var bwrapDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/console", "/dev/ptmx"}

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
