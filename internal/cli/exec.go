package cli

import (
	"context"

	"github.com/guardrun/guardrun/internal/request"
)

func runArgv(g *global, argv []string, io IO) error {
	if len(argv) == 0 {
		return usagef("-- needs a command")
	}
	return execute(g, &request.Job{Argv: argv}, io)
}

func execute(g *global, j *request.Job, io IO) error {
	s, err := request.Open(g.Options, io)
	if err != nil {
		return err
	}
	return s.Run(context.Background(), j, io)
}
