package cli

import (
	"os"
	"strconv"

	"github.com/guardrun/guardrun/netproxy"
)

const connectUsage = `usage: guardrun connect HOST PORT

Inside a sandbox with network: proxy, open a tunnel to HOST:PORT through
guardrun's proxy (found through $HTTPS_PROXY) and copy standard input and
output to it, the way ssh's ProxyCommand wants. For git over ssh:

  GIT_SSH_COMMAND='ssh -o ProxyCommand="/.guardrun/guardrun connect %h %p"'

The host is judged like any other (sandbox.domains, or a prompt).
`

func cmdConnect(g *global, args []string, io IO) error {
	vf, help, err := verbStart(g, args, connectUsage, nil, nil, io)
	if err != nil || help {
		return err
	}
	if len(vf.args) != 2 {
		return usagef("connect wants HOST PORT")
	}
	port, err := strconv.Atoi(vf.args[1])
	if err != nil || port <= 0 || port > 65535 {
		return usagef("connect: bad port %q", vf.args[1])
	}
	proxy := ""
	for _, k := range []string{"HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"} {
		if proxy = os.Getenv(k); proxy != "" {
			break
		}
	}
	if proxy == "" {
		return usagef("connect: no proxy: HTTPS_PROXY is not set (it is inside a sandbox with network: proxy)")
	}
	if err := netproxy.Connect(proxy, vf.args[0], port, io.Stdin, io.Stdout); err != nil {
		return &refusal{Line: "guardrun: connect " + vf.args[0] + ":" + vf.args[1] + ": " + err.Error()}
	}
	return nil
}
