package netproxy

import (
	"encoding/binary"
	"net/netip"
	"syscall"
)

// The tables the default policy rules look up (RT_TABLE_*).
const (
	rtTableDefault = 253
	rtTableMain    = 254
	rtTableLocal   = 255
)

// localRoutes dumps the routing tables (RTM_GETROUTE, all families) and
// keeps the prefixes of the routes that deliver to this host: local,
// broadcast and anycast routes, which the kernel keeps in its local table
// (`ip route show table local`) and an administrator may add (AnyIP).
// Only the tables the default policy rules consult for every packet
// count (local, main, default), as `ip route get` would: a table that a
// rule selects by firewall mark (a transparent proxy's `local
// 0.0.0.0/0` in table 100) is not where the proxy's own connections go.
func localRoutes() ([]netip.Prefix, error) {
	rib, err := syscall.NetlinkRIB(syscall.RTM_GETROUTE, syscall.AF_UNSPEC)
	if err != nil {
		return nil, err
	}
	msgs, err := syscall.ParseNetlinkMessage(rib)
	if err != nil {
		return nil, err
	}
	var out []netip.Prefix
	for i := range msgs {
		m := &msgs[i]
		if m.Header.Type != syscall.RTM_NEWROUTE || len(m.Data) < syscall.SizeofRtMsg {
			continue
		}
		// struct rtmsg: family, dst_len, src_len, tos, table,
		// protocol, scope, type.
		family, dstLen, table, typ := m.Data[0], int(m.Data[1]), uint32(m.Data[4]), m.Data[7]
		switch typ {
		case syscall.RTN_LOCAL, syscall.RTN_BROADCAST, syscall.RTN_ANYCAST:
		default:
			continue
		}
		attrs, err := syscall.ParseNetlinkRouteAttr(m)
		if err != nil {
			return nil, err
		}
		var dst netip.Addr
		for _, a := range attrs {
			switch a.Attr.Type {
			case syscall.RTA_DST:
				dst, _ = netip.AddrFromSlice(a.Value)
			case syscall.RTA_TABLE:
				if len(a.Value) == 4 {
					table = binary.NativeEndian.Uint32(a.Value)
				}
			}
		}
		if table != rtTableLocal && table != rtTableMain && table != rtTableDefault {
			continue
		}
		if !dst.IsValid() {
			// No destination: the whole family (a default route of a
			// local type, which would make every address local).
			switch family {
			case syscall.AF_INET:
				dst = netip.IPv4Unspecified()
			case syscall.AF_INET6:
				dst = netip.IPv6Unspecified()
			default:
				continue
			}
		}
		p, err := dst.Unmap().Prefix(dstLen)
		if err != nil {
			continue
		}
		out = append(out, p)
	}
	return out, nil
}
