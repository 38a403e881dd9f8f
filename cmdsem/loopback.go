package cmdsem

// Where curl and wget connect: each URL they are given is a Connect
// effect (Option "" for an operand, "--url" for curl's option), and so
// is each option that names another host to go through or to resolve
// with (a proxy, a DNS-over-HTTPS server, --connect-to, --resolve), with
// that option. Policy reads them to tell a request to the project's own
// server on loopback (network: loopback) from one that goes elsewhere;
// the proxy judges every connection either way.

// curlHosts are curl's options that name a host other than the URL's.
var curlHosts = []string{"x", "proxy", "preproxy", "socks4", "socks4a", "socks5", "socks5-hostname", "proxy1.0",
	"doh-url", "connect-to", "resolve", "dns-servers", "dns-interface", "dns-ipv4-addr", "dns-ipv6-addr", "haproxy-clientip", "interface"}

// withConnects adds to do a Connect act for each of the options, and
// one for url.
func withConnects(do map[string]act, hosts []string, url string) map[string]act {
	for _, h := range hosts {
		do[h] = act{Connect, "names another host to connect through"}
	}
	if url != "" {
		do[url] = act{Connect, "connects to the URL"}
	}
	return do
}

// connectOps records each operand as a URL the program connects to.
func connectOps(r *result, ops []opnd) {
	for _, o := range ops {
		r.add(Effect{Kind: Connect, Word: o.idx, Path: o.Value, Dynamic: !o.Static, Why: "connects to the URL"})
	}
}
