package cli

import (
	"context"
	"errors"
	"fmt"
	goio "io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/guardrun/guardrun/internal/config"
	"github.com/guardrun/guardrun/internal/mcpserver"
	"github.com/guardrun/guardrun/internal/request"
)

const mcpUsage = `Usage: guardrun mcp [--listen ADDR] [--dir DIR] [--no-elicitation]

An MCP (Model Context Protocol) server whose tools go through guardrun:
  run             a shell script: judged by the rules, approved where they ask,
                  run in the OS sandbox, audited ("via": "mcp"); exit status and
                  the end of stdout and stderr
  read_file, write_file, edit_file, list_directory, search_files
                  file operations through the file zones, as guardrun fs does
A refusal comes back as a tool error with guardrun's one-line reason.

Approvals: in the client's own form (MCP elicitation) when it offers one;
else the supervisor when the agent runs under guardrun supervise; else
nobody, and interactive mode acts as strict. Never on a terminal.

By default it speaks MCP on stdin and stdout (what agents start).
  --listen ADDR       serve streamable HTTP at http://ADDR/mcp instead: a loopback
                      address and port (127.0.0.1:0 picks a free one). A secret
                      token is printed at start; clients send it as
                      Authorization: Bearer TOKEN (or token=TOKEN in the URL).
  --dir DIR           work in DIR (the project) instead of the current directory
  --no-elicitation    never ask through the client's form, even if it offers one
  and the common flags --config, --mode, --strict, --approve-all, --session.

See docs/mcp.md for each agent's configuration.

Exit status: 0 when the client closed the connection (or ^C); 125 when
guardrun could not start (a bad config, no OS sandbox under fail_fast);
2 usage error.
`

func cmdMCP(g *global, args []string, io IO) error {
	vf, help, err := verbStart(g, args, mcpUsage, []string{"--listen", "--dir"}, []string{"--no-elicitation"}, io)
	if err != nil || help {
		return err
	}
	if len(vf.args) > 0 || vf.dashes {
		return usagef("mcp takes no arguments")
	}
	listen, serveHTTP := vf.values["--listen"]
	if serveHTTP {
		if err := mcpserver.CheckListen(listen); err != nil {
			return usagef("%v", err)
		}
	}
	if dir, ok := vf.values["--dir"]; ok {
		if err := os.Chdir(dir); err != nil {
			return usagef("--dir %s: %v", dir, errors.Unwrap(err))
		}
	}
	// The config and the OS sandbox are checked now, so that a server
	// that could never run anything says so at once (125).
	if _, err := request.Open(g.Options, request.IO{Stderr: io.Stderr}); err != nil {
		return err
	}
	env, err := config.NewEnv()
	if err != nil {
		return err
	}
	srv := mcpserver.New(mcpserver.Config{
		Options: g.Options, Env: env, Log: io.Stderr,
		NoElicitation: vf.bools["--no-elicitation"], Version: mcpVersion(),
	})
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	if !serveHTTP {
		out := io.Stdout
		if out == goio.Writer(os.Stdout) {
			out = mcpserver.ProtectStdout()
		}
		return srv.ServeStdio(ctx, goio.NopCloser(io.Stdin), nopWriteCloser{out})
	}
	return serveMCPHTTP(ctx, srv, listen, io)
}

func serveMCPHTTP(ctx context.Context, srv *mcpserver.Server, listen string, io IO) error {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	addr := ln.Addr().String()
	token := mcpserver.NewToken()
	url := "http://" + addr + mcpserver.Path
	fmt.Fprintf(io.Stdout, "guardrun mcp: listening on %s\n  token: %s\n  (send it as Authorization: Bearer TOKEN, or use %s?token=%s)\nstop with ^C\n", url, token, url, token)
	if f, ok := io.Stdout.(*os.File); ok {
		f.Sync()
	}
	hs := &http.Server{Handler: srv.Handler(addr, token), ReadHeaderTimeout: 10 * time.Second}
	errs := make(chan error, 1)
	go func() { errs <- hs.Serve(ln) }()
	select {
	case err = <-errs:
	case <-ctx.Done():
	}
	// Every call still running ends, its sandbox with it, then the
	// connections (event streams included) close.
	srv.Shutdown()
	hs.Close()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

type nopWriteCloser struct{ goio.Writer }

func (nopWriteCloser) Close() error { return nil }

// mcpVersion is guardrun's version as an MCP client is told it.
func mcpVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
