// Package netproxy is guardrun's host-side network proxy: HTTP CONNECT
// and plain absolute-form HTTP, judging every host a sandboxed command
// wants to reach by sandbox.domains (deny beats allow; anything else asks
// a person through the same gate as commands; strict refuses) and
// writing one audit record per connection.
//
// It does not terminate TLS, cache or rewrite bodies; it authenticates
// clients only by the per-command token of a shared proxy. It reads a
// tunnel's TLS ClientHello only to compare its server name (SNI) with the
// CONNECT host, then the host's answer up to its ServerHello: after a TLS
// 1.3 HelloRetryRequest the client's second ClientHello is judged the
// same way. The bytes pass on unchanged; the client's wait, unread, until
// the host's ServerHello is known, and anything but a ServerHello (or a
// first retry request; warning alerts before either, and the
// change_cipher_spec a host sends after its retry request, pass) ends
// the tunnel. It speaks no SOCKS.
//
// The proxy resolves names itself (LookupNetIP, a hook tests set) and
// connects to the address it checked, so a name cannot resolve to one
// address for the check and another for the connection. A name that
// asks is resolved only after a person allowed it (the lookup would carry
// the name to its DNS servers). Loopback, private, link-local,
// site-local, shared (100.64/10), unspecified, multicast and
// IPv4-compatible addresses, and NAT64, 6to4 and Teredo addresses that
// carry one, are refused unless sandbox.domains.allow lists them by
// address or CIDR; so are this host's own addresses (every interface's,
// their broadcasts, and whatever a local route of the local, main or
// default table delivers here), enumerated for every connection, since
// the proxy dials from the host. An IPv4 address deny lists is denied in
// those forms too. IPv6 zones and numeric last labels (2130706433,
// 127.1) are refused. At most 8 hosts of a client wait for
// an answer at once.
//
// Bounds: a request's header must arrive within 30 s, a tunnel's
// ClientHello within 30 s (the host's ServerHello, and a second
// ClientHello, within 30 s each; 64 KiB each at most), and a connection idle between requests is
// closed after 2 minutes; past 1024 open connections (a tunnel counts
// twice) a proxy closes new ones at once until some end.
//
// # How a sandbox reaches it
//
// bwrap: the sandbox has an empty network namespace (loopback only). Its
// first process is guardrun's hidden verb (Bridge), bound read-only into
// the sandbox, which makes a TCP listener on 127.0.0.1:3128 inside that
// namespace, hands it over the proxy's unix socket (SCM_RIGHTS, a socket
// in a 0700 directory, bound read-only into the sandbox), applies the
// command's seccomp program (which refuses socket(AF_UNIX), socketpair
// stays) and executes the command. The proxy then accepts the command's
// connections on that listener itself: nothing in the sandbox copies
// bytes, and the command, unable to open a unix socket, has no way out
// but loopback port 3128.
//
// landlock (no network namespace): the proxy listens on a loopback TCP
// port of the host (ServeTokens) and every request must carry the
// command's token (Proxy-Authorization: Basic, from the proxy URL's
// userinfo; 407 without). The command may open TCP sockets only, Landlock
// lets it connect to the proxy's port only, and guardrun performs each
// connect itself, to the proxy's address only (landlock.Config.Proxy).
//
// Shared: one Proxy serves several commands (the supervisor's session),
// each a Client with its own gate, audit and "yes" memory, told apart by
// the listener its bridge handed over with its token (ServeUnixTokens) or
// by the token on each request (ServeTokens). A token may be registered
// (RegisterToken) after the command started: requests wait TokenWait.
//
// # Limitations
//
//   - A person's "yes" (not "for session"), and "no", hold for the rest
//     of one command (its Client), for that host and port.
//   - Whoever knows a command's token can use its approvals while it
//     runs; the token lives in the command's environment.
//   - Tunnels that do not start with TLS are passed through on ports
//     other than 443 (ssh for git, for example); on 443 they are refused.
//     A tunnel whose first byte starts a TLS handshake or alert record
//     (0x16, 0x15: TLS servers skip warning alerts before a ClientHello)
//     is read as TLS on every port, and must begin with a ClientHello.
//     The proxy waits for the client's first bytes (30 s at most): a
//     protocol whose server speaks first (SMTP, IMAP, MySQL) gets no
//     greeting, and its tunnel ends.
//     A tunnel to an allowed host can carry any protocol to that host.
//   - Clients sending an Encrypted Client Hello extension are refused
//     (its outer name may be the host while the inner, hidden one names
//     any site behind the same front end), GREASE ones too (Chromium:
//     --disable-features=EncryptedClientHello).
//   - Only a tunnel's plaintext ClientHellos are read (the first, and
//     the second after a TLS 1.3 HelloRetryRequest): the Host header
//     inside TLS, and a TLS 1.2 renegotiation's encrypted hello, can name
//     another site; which one an allowed host's server (a CDN) serves
//     then is up to that server.
//   - Plain requests that switch protocols (ws://) are answered 502.
//   - A host's approval covers every address it resolves to (after the
//     private-address check), and a wildcard covers every subdomain.
//   - Only HTTP/1.1 to the proxy; plain requests are forwarded with
//     HTTP/1.1, one connection per request.
//   - A tunnel, and a forwarded plain request, copies each byte through
//     user space (a read and a write of up to 1 MiB): on loopback that is
//     a second TCP connection's kernel work and two more copies per
//     byte. A download through the proxy costs 1.7-2.2 times the CPU of
//     a direct one with a bare client (BenchmarkThroughput), 1.3-1.5
//     times with curl over TLS (BenchmarkProxyThroughput in
//     integration); on two cores that leaves 0.5-0.7 of a direct
//     loopback download, 0.55-0.9 with curl, not a steady 0.8.
//     splice(2) and a locked thread per direction measured no better
//     (docs/performance.md). Against a real network the proxy is far
//     faster than the link.
package netproxy
