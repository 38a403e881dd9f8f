// Command guardrun checks, asks about and sandboxes the commands an agent
// runs. See the README for usage.
package main

import (
	"os"

	"github.com/guardrun/guardrun/internal/cli"
	// The client of `guardrun serve`: an ELF constructor that hands the
	// request to the server named by $GUARDRUN_SERVER before Go starts.
	_ "github.com/guardrun/guardrun/internal/serve/client"
)

func main() {
	os.Exit(cli.Main(os.Args[0], os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
