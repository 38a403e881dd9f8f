package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"github.com/guardrun/guardrun/internal/request"
	"github.com/guardrun/guardrun/internal/serve"
)

const serveUsage = `Usage: guardrun serve -- CMD [ARG...]

Runs CMD (not sandboxed itself, as supervise runs its agent) with
GUARDRUN_SERVER in its environment: a socket where this guardrun runs the
commands of every guardrun -c / guardrun -- that CMD and its children
start, instead of each starting guardrun anew. Requests are decided,
sandboxed, audited and reported exactly as without the server; one the
server cannot take as is (a prompt for a person, another environment,
another verb) runs the usual way. Use it for builds that start many
commands: guardrun serve -- make -j8 SHELL=guardrun.

SIGINT, SIGTERM, SIGHUP and SIGQUIT are passed on to CMD. When CMD ends,
commands still running for it are ended and the server stops.

Exit status: CMD's own (signals as 128+N); 125 if guardrun failed; 126
if CMD cannot be run, 127 if it is not found.
`

func cmdServe(g *global, args []string, io IO) error {
	vf, help, err := verbStart(g, args, serveUsage, nil, nil, io)
	if err != nil || help {
		return err
	}
	argv, err := vf.command("serve needs a command: guardrun serve -- CMD [ARG...]")
	if err != nil {
		return err
	}
	given := g.Options
	if v := os.Getenv("GUARDRUN_BACKEND"); v != "" && string(given.Backend) == v {
		given.Backend = "" // from the environment, which CMD's commands get too
	}
	if given != (request.Options{}) {
		// Each command is parsed as its own guardrun would parse it.
		return usagef("serve takes no flags: give them to the commands CMD runs, or set them in the config")
	}
	srv, err := serve.Listen(serve.Config{Parse: ParseRun, Report: report})
	if err != nil {
		return err
	}
	defer srv.Close()
	go func() {
		if err := srv.Serve(); err != nil {
			fmt.Fprintf(io.Stderr, "guardrun: warning: %v; commands run the usual way from now on\n", err)
		}
	}()

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sigs)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = setenv(os.Environ(), request.ServerEnvVar, srv.Path())
	cmd.Stdin, cmd.Stdout, cmd.Stderr = io.Stdin, io.Stdout, io.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(io.Stderr, "guardrun: serve: %v\n", err)
		switch {
		case errors.Is(err, exec.ErrNotFound), errors.Is(err, fs.ErrNotExist):
			return &exitStatus{Code: 127}
		default:
			return &exitStatus{Code: 126}
		}
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	werr := cmd.Wait()
	close(done)
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok {
		switch {
		case ws.Exited() && ws.ExitStatus() == 0:
			return nil
		case ws.Exited():
			return &exitStatus{Code: ws.ExitStatus()}
		case ws.Signaled():
			return &exitStatus{Code: 128 + int(ws.Signal())}
		}
	}
	return fmt.Errorf("serve: %v", werr)
}
