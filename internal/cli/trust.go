package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/config"
	"github.com/guardrun/guardrun/rules"
)

const trustUsage = `Usage: guardrun trust [FILE]
       guardrun trust --list
       guardrun trust --revoke [FILE]

A .guardrun.yaml found by walking up from the working directory comes with
the repository, so it may only tighten your config until you trust it.
trust shows the file and what trusting it would change, asks you to
confirm on the terminal, and records its content hash: any later edit makes
it untrusted again. FILE defaults to the nearest .guardrun.yaml.
`

func cmdTrust(g *global, args []string, io IO) error {
	vf, help, err := verbStart(g, args, trustUsage, nil, []string{"--list", "--revoke"}, io)
	if err != nil || help {
		return err
	}
	if len(vf.args) > 1 || vf.dashes {
		return usagef("trust takes at most one file")
	}
	e, err := config.NewEnv()
	if err != nil {
		return err
	}
	// The trust store must not be one an earlier sandboxed command could
	// have written (SPEC §2): the same check as every run's.
	ref := &config.Loaded{}
	if err := ref.Discover(e.Clean(), nil); err != nil {
		return err
	}
	if err := config.CheckState(e, ref.Cfg); err != nil {
		return err
	}
	store := config.OpenTrustStore(e.StateDir)
	if vf.bools["--list"] {
		if len(vf.args) > 0 || vf.bools["--revoke"] {
			return usagef("--list takes no file")
		}
		list, err := store.List()
		if err != nil {
			return err
		}
		if g.json {
			return json.NewEncoder(io.Stdout).Encode(list)
		}
		for _, en := range list {
			state := "trusted"
			if data, err := config.ReadProject(en.Path); errors.Is(err, fs.ErrNotExist) {
				state = "missing"
			} else if err != nil || config.TrustHash(data) != en.SHA256 {
				state = "changed since trusted (untrusted)"
			}
			fmt.Fprintf(io.Stdout, "%s  %s  %s\n", en.Trusted.Local().Format(time.DateTime), en.Path, state)
		}
		return nil
	}
	file := ""
	if len(vf.args) == 1 {
		file, err = filepath.Abs(vf.args[0])
		if err != nil {
			return err
		}
	} else if fs := config.FindProjects(e.Cwd); len(fs) > 0 {
		file = fs[0]
	} else {
		return fmt.Errorf("trust: no %s in %s or any parent directory", config.ProjectFile, e.Cwd)
	}
	if vf.bools["--revoke"] {
		found, err := store.Revoke(file)
		if err != nil {
			return err
		}
		if !found {
			fmt.Fprintf(io.Stdout, "%s was not trusted\n", file)
			return nil
		}
		fmt.Fprintf(io.Stdout, "%s is no longer trusted\n", file)
		return nil
	}
	// Size-checked before it is read, as every config file is, and
	// opened without waiting: a command run in the project can have
	// made it a FIFO, or a link (never followed: see ReadProject).
	data, err := config.ReadProject(file)
	if err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	proj, err := rules.Parse(file, data, filepath.Dir(file), e.RulesEnv())
	if err != nil {
		return err
	}
	base, chain, err := config.UserOrDefault(e, "")
	if err != nil {
		return err
	}
	baseSource := chain[len(chain)-1].Origin
	_, ignored := rules.Tighten(base, proj)
	tty, err := approval.OpenTTY()
	if err != nil {
		return fmt.Errorf("trust: confirming needs a terminal (/dev/tty); run guardrun trust yourself, not through an agent")
	}
	defer tty.Close()
	fmt.Fprintf(tty, "── %s ──\n", file)
	lines := strings.Split(strings.TrimRight(approval.Sanitize(string(data)), "\n"), "\n")
	for i, ln := range lines {
		fmt.Fprintf(tty, "%4d  %s\n", i+1, ln)
	}
	if len(ignored) == 0 {
		fmt.Fprintf(tty, "\nAgainst your base config (%s) this file only tightens; trusting it changes nothing now.\n", baseSource)
	} else {
		fmt.Fprintf(tty, "\nTrusting it replaces your base config (%s) in this directory and applies what is now ignored:\n", baseSource)
		for _, s := range ignored {
			fmt.Fprintf(tty, "  - %s\n", approval.Sanitize(s))
		}
	}
	fmt.Fprint(tty, "Trust this file? [y/N] ")
	answer, _ := bufio.NewReader(tty).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
		return &refusal{Line: "guardrun: trust: not trusted (declined)"}
	}
	if err := store.Trust(file, data); err != nil {
		return err
	}
	fmt.Fprintf(io.Stdout, "trusted %s (sha256 %s)\n", file, config.TrustHash(data)[:16])
	return nil
}
