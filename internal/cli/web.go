package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/broker"
	"github.com/guardrun/guardrun/internal/config"
	"github.com/guardrun/guardrun/internal/web"
)

const webUsage = `Usage: guardrun web [--listen ADDR] [--open]

Runs your approval broker with a web page. Every guardrun of yours that
needs your approval (one under guardrun supervise asks its supervisor
first) posts its request here, and the page shows it at once: the script
with the commands that ask marked, file diffs, the reasons, the process
that asked and its directory. Answer with the buttons or the keys y (once),
s (session), a (always in this project), n (deny, with a note); the first
answer anywhere is the one that counts. The page also shows the history
from the audit log, session grants and project rules (each revocable).

  --listen ADDR   where the page listens (default 127.0.0.1 on a random port;
                  loopback addresses only)
  --open          open the page in the browser (xdg-open, or open on macOS)

The URL printed carries a secret token: whoever has it can answer. The
page exchanges it for a cookie and a key of the tab's own. Stop with ^C:
requests still waiting are refused, never run.
`

func cmdWeb(g *global, args []string, io IO) error {
	vf, err := parseVerb(g, args, []string{"--listen"}, []string{"--open"})
	if err != nil {
		return err
	}
	if vf.bools["help"] {
		fmt.Fprint(io.Stdout, webUsage)
		return nil
	}
	if len(vf.args) > 0 || vf.dashes {
		return usagef("web takes no arguments")
	}
	e, l, err := config.LoadProcess(g.ConfigFlags())
	if err != nil {
		return err
	}
	b := broker.New()
	bs, err := broker.Listen(broker.SocketPath(e), b)
	if err != nil {
		var running *broker.AlreadyRunningError
		if errors.As(err, &running) {
			return fmt.Errorf("web: %v; stop it first (one broker per user)", err)
		}
		return err
	}
	defer bs.Close()
	var rules *approval.RuleStore
	if e.StateDir != "" {
		rules, _ = approval.OpenRuleStore(e.StateDir)
	}
	ws, err := web.New(web.Config{
		Broker: b, Listen: vf.values["--listen"],
		AuditPath: l.Cfg.Audit.Path, StoreDir: e.SessionStore(), SessionTTL: l.Cfg.Session.TTL,
		Rules: rules,
	})
	if err != nil {
		return err
	}
	bs.FrontToken = ws.Token()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	errs := make(chan error, 2)
	go func() { errs <- bs.Serve() }()
	go func() { errs <- ws.Serve() }()
	fmt.Fprintf(io.Stdout, "guardrun web: your approvals at\n  %s\n(broker socket %s; stop with ^C)\n", ws.URL(), bs.Path())
	if f, ok := io.Stdout.(*os.File); ok {
		f.Sync()
	}
	if vf.bools["--open"] {
		if err := openBrowser(ws.URL()); err != nil {
			fmt.Fprintf(io.Stderr, "guardrun: warning: could not open a browser (%v); open the URL above\n", err)
		}
	}
	select {
	case <-sigs:
	case err = <-errs:
	}
	ws.Close()
	bs.Close()
	return err
}

// openBrowser starts the person's browser on url, without waiting for
// it.
func openBrowser(url string) error {
	prog := "xdg-open"
	if runtime.GOOS == "darwin" {
		prog = "open"
	}
	cmd := exec.Command(prog, url)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, nil, nil
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}
