package rules

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/guardrun/guardrun/cmdsem"
	"github.com/guardrun/guardrun/shellparse"
)

// A request to the project's own server: a rule with network: loopback
// applies only to a command whose every destination (curl's and wget's
// URLs, from the command semantics table) is a port of the host's
// loopback that sandbox.domains.loopback lists, under sandbox.network:
// proxy, and that names no other host to go through. The proxy lets
// those ports through at run time and judges every other connection as
// it always does.

// loopbackOnly reports whether command c reaches only loopback ports
// the config lists; why says otherwise.
func (e *Engine) loopbackOnly(c shellparse.Command) (bool, string) {
	if len(c.Argv) == 0 || !c.Argv[0].Static() || !cmdsem.Known(c.Name()) {
		return false, "guardrun does not know where it connects"
	}
	dm := e.cfg.Sandbox.Domains
	if !e.cfg.Sandbox.Proxy {
		return false, "sandbox.network is not proxy, so it reaches no server, loopback or other"
	}
	n := 0
	for _, ef := range cmdsem.Analyze(cmdArgs(c), nil) {
		if ef.Kind != cmdsem.Connect {
			continue
		}
		if ef.Option != "" && ef.Option != "--url" {
			return false, fmt.Sprintf("%s %s names another host", ef.Option, ef.Path)
		}
		if ef.Dynamic {
			return false, fmt.Sprintf("the URL %s is not known until run time", ef.Path)
		}
		host, port, ok := loopbackURL(ef.Path)
		if !ok {
			return false, fmt.Sprintf("%s is not a URL of the host's loopback", ef.Path)
		}
		if v, _ := dm.HostVerdict(host); v == Block {
			return false, fmt.Sprintf("%s is denied (sandbox.domains.deny)", host)
		}
		if a, err := netip.ParseAddr(host); err == nil {
			if _, denied := dm.AddrListed(a); denied {
				return false, fmt.Sprintf("%s is denied (sandbox.domains.deny)", host)
			}
		}
		if !slices.Contains(dm.Loopback, port) {
			return false, fmt.Sprintf("port %d is not in sandbox.domains.loopback", port)
		}
		n++
	}
	if n == 0 {
		return false, "it names no URL"
	}
	return true, ""
}

// loopbackURL reads a URL as curl and wget do (a scheme, or none for
// http) and returns its host and port when it is http or https on
// localhost, 127.0.0.1 or [::1]; anything that could make the two read
// different hosts (user information, percent-encoding, backslashes,
// curl's {} and [] globs beside the [::1] host, spaces) is not.
func loopbackURL(u string) (host string, port int, ok bool) {
	rest, port := u, 80
	if scheme, after, found := strings.Cut(u, "://"); found {
		switch strings.ToLower(scheme) {
		case "http":
		case "https":
			port = 443
		default:
			return "", 0, false
		}
		rest = after
	}
	authority := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority, rest = rest[:i], rest[i:]
	} else {
		rest = ""
	}
	if strings.ContainsAny(u, "@%\\{}\t\n\r ") || strings.ContainsAny(rest, "[]") {
		return "", 0, false
	}
	for _, r := range u {
		if r < 0x20 || r == 0x7f || r > 0x7e {
			return "", 0, false
		}
	}
	h, p := authority, ""
	switch {
	case strings.HasPrefix(authority, "[::1]"):
		h, p = "::1", strings.TrimPrefix(authority, "[::1]")
	case strings.ContainsAny(authority, "[]"):
		return "", 0, false
	default:
		if i := strings.IndexByte(authority, ':'); i >= 0 {
			h, p = authority[:i], authority[i:]
		}
	}
	if p != "" {
		digits, found := strings.CutPrefix(p, ":")
		if !found || digits == "" || len(digits) > 5 || strings.Trim(digits, "0123456789") != "" {
			return "", 0, false
		}
		n, err := strconv.Atoi(digits)
		if err != nil || n < 1 || n > 65535 {
			return "", 0, false
		}
		port = n
	}
	switch strings.ToLower(h) {
	case "localhost", "127.0.0.1":
		return strings.ToLower(h), port, true
	case "::1":
		return "::1", port, true
	}
	return "", 0, false
}
