package sandbox

// ProxyEnv is the environment that tells a command's tools where
// guardrun's proxy is, for a profile with Proxy: the proxy variables in
// both cases (curl reads only the lower-case http_proxy), ALL_PROXY,
// NODE_USE_ENV_PROXY=1 for Node's built-in fetch and https, and NO_PROXY
// empty so that nothing is meant to bypass it (a bypass finds no route
// anyway). addr is host:port. Every backend that renders Proxy sets
// these.
func ProxyEnv(addr string) []string {
	u := "http://" + addr
	return []string{
		"HTTP_PROXY=" + u, "http_proxy=" + u,
		"HTTPS_PROXY=" + u, "https_proxy=" + u,
		"ALL_PROXY=" + u, "all_proxy=" + u,
		"NO_PROXY=", "no_proxy=",
		"NODE_USE_ENV_PROXY=1",
	}
}
