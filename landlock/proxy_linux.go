package landlock

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/guardrun/guardrun/sandbox"
	"github.com/guardrun/guardrun/seccomp/notify"
)

// commandPolicy is the command's system call policy: the profile's, and
// with the proxy TCP sockets only (sandbox.SeccompPolicy.InetStreamOnly).
func commandPolicy(p *sandbox.Profile) sandbox.SeccompPolicy {
	pol := p.Seccomp
	if p.Proxy {
		pol.AllowNetwork, pol.AllowUnix, pol.InetStreamOnly = true, false, true
	}
	return pol
}

// proxyPorts checks that proxy, where a command with the proxy reaches
// it, is a loopback address and port, and that Landlock here can limit
// TCP to it; it returns the one port the command may connect to.
func proxyPorts(proxy netip.AddrPort) ([]uint16, error) {
	if !proxy.IsValid() || !proxy.Addr().IsLoopback() || proxy.Port() == 0 {
		return nil, fmt.Errorf("landlock: the proxy's address %s is not a loopback address and port", proxy)
	}
	abi, err := ABI()
	if err != nil {
		return nil, err
	}
	if abi < ProxyABI {
		return nil, fmt.Errorf("landlock: network: proxy needs Landlock ABI %d (Linux 6.7) to limit TCP to the proxy's port; this kernel has ABI %d. Use the bwrap backend, or sandbox.network true or false", ProxyABI, abi)
	}
	return []uint16{proxy.Port()}, nil
}

// ProxyConnect is the handler of connect(2) for a command with the
// proxy: it reads the command's socket address once, into guardrun's
// memory; refuses (EACCES, as Landlock would) any destination but proxy
// (an IPv4-mapped IPv6 form of it included) and any socket but a TCP
// one; and connects a duplicate of the command's socket (pidfd_getfd),
// which shares the open file, to the address it checked. The call
// returns what that connect returned: EINPROGRESS for a non-blocking
// socket, which then completes in the command's hands.
func ProxyConnect(proxy netip.AddrPort) notify.Handler {
	want := netip.AddrPortFrom(proxy.Addr().Unmap(), proxy.Port())
	return func(r *notify.Request) notify.Response {
		n := int(uint32(r.Args[2]))
		if n < 2 || n > unix.SizeofSockaddrAny {
			return notify.Fail(syscall.EINVAL)
		}
		raw, err := r.ReadBytes(r.Args[1], n)
		if err != nil {
			return notify.Fail(errnoOf(err, syscall.EFAULT))
		}
		var sa unix.Sockaddr
		var dest netip.AddrPort
		switch binary.NativeEndian.Uint16(raw) {
		case unix.AF_INET:
			if n < unix.SizeofSockaddrInet4 {
				return notify.Fail(syscall.EINVAL)
			}
			var a [4]byte
			copy(a[:], raw[4:8])
			dest = netip.AddrPortFrom(netip.AddrFrom4(a), binary.BigEndian.Uint16(raw[2:4]))
			sa = &unix.SockaddrInet4{Port: int(dest.Port()), Addr: a}
		case unix.AF_INET6:
			if n < 24 { // SIN6_LEN_RFC2133, the least the kernel takes
				return notify.Fail(syscall.EINVAL)
			}
			var a [16]byte
			copy(a[:], raw[8:24])
			dest = netip.AddrPortFrom(netip.AddrFrom16(a), binary.BigEndian.Uint16(raw[2:4]))
			sa = &unix.SockaddrInet6{Port: int(dest.Port()), Addr: a}
		default:
			// AF_UNIX, AF_UNSPEC (which would dissolve a connection the
			// proxy made) and every other family.
			return notify.Fail(syscall.EACCES)
		}
		if netip.AddrPortFrom(dest.Addr().Unmap(), dest.Port()) != want {
			return notify.Fail(syscall.EACCES)
		}
		fd, err := r.GetFD(r.FDArg(0))
		if err != nil {
			return notify.Fail(errnoOf(err, syscall.EBADF))
		}
		defer unix.Close(fd)
		dom, err1 := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN)
		typ, err2 := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
		proto, err3 := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_PROTOCOL)
		if err := errors.Join(err1, err2, err3); err != nil {
			return notify.Fail(errnoOf(err, syscall.ENOTSOCK))
		}
		if dom != unix.AF_INET && dom != unix.AF_INET6 || typ != unix.SOCK_STREAM || proto != unix.IPPROTO_TCP {
			return notify.Fail(syscall.EACCES)
		}
		if err := unix.Connect(fd, sa); err != nil {
			return notify.Fail(errnoOf(err, syscall.ECONNREFUSED))
		}
		return notify.Value(0)
	}
}

func errnoOf(err error, def syscall.Errno) syscall.Errno {
	var e syscall.Errno
	if errors.As(err, &e) && e != 0 {
		return e
	}
	return def
}
