package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/config"
	"github.com/guardrun/guardrun/internal/request"
	"github.com/guardrun/guardrun/shellparse"
)

const logUsage = `Usage: guardrun log [--json] [-n N] [--session ID]

Shows the audit log: every decision, who made it and what happened.
-n N shows the last N entries; --session ID only that session's.
`

func cmdLog(g *global, args []string, io IO) error {
	vf, help, err := verbStart(g, args, logUsage, []string{"-n"}, nil, io)
	if err != nil || help {
		return err
	}
	if len(vf.args) > 0 || vf.dashes {
		return usagef("log takes no arguments")
	}
	n := 0
	if s, ok := vf.values["-n"]; ok {
		n, err = strconv.Atoi(s)
		if err != nil || n < 0 {
			return usagef("-n wants a number of entries, got %q", s)
		}
	}
	_, l, err := config.LoadProcess(g.ConfigFlags())
	if err != nil {
		return err
	}
	// A command is two records, its start and its end: read twice as
	// many, join them, keep n.
	recs, err := approval.ReadAudit(l.Cfg.Audit.Path, approval.Filter{Session: g.Session, Last: 2 * n})
	recs = approval.JoinRuns(recs)
	if n > 0 && len(recs) > n {
		recs = recs[len(recs)-n:]
	}
	if errors.Is(err, fs.ErrNotExist) {
		if !g.json {
			fmt.Fprintf(io.Stdout, "no audit log yet at %s\n", l.Cfg.Audit.Path)
		}
		return nil
	}
	if err != nil && len(recs) == 0 {
		return err
	}
	if err != nil {
		fmt.Fprintf(io.Stderr, "guardrun: warning: %v\n", err)
	}
	if g.json {
		enc := json.NewEncoder(io.Stdout)
		for _, r := range recs {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	}
	for _, r := range recs {
		what := r.Script
		if r.Argv != nil {
			what = shellparse.QuoteArgv(r.Argv, l.Engine.Dialect())
		}
		if r.Op != "" {
			what = r.Op + " " + r.Path
		}
		status := r.Outcome
		if r.Outcome == approval.OutcomeStarted {
			// No end record: still running, or guardrun was killed.
			status = "unfinished"
		}
		if r.Exit != nil {
			status += " " + strconv.Itoa(*r.Exit)
		}
		line := fmt.Sprintf("%s  %-5s %-7s %-9s %s", r.Time.Local().Format(time.DateTime), r.Verdict, r.DecidedBy, status, request.OneLineDisplay(what))
		if r.Via != "" {
			line += "  (via " + request.OneLineDisplay(r.Via) + ")"
		}
		if r.Note != "" {
			line += "  # " + request.OneLineDisplay(r.Note)
		}
		fmt.Fprintln(io.Stdout, strings.TrimRight(line, " "))
	}
	return nil
}

const sessionUsage = `Usage: guardrun session list
       guardrun session revoke [KEY | --all]

list shows stored sessions and, for the current one (--session ID,
$GUARDRUN_SESSION or the terminal's session), its grants. revoke removes one
grant of the current session by key, or all of them.
`

func cmdSession(g *global, args []string, io IO) error {
	vf, err := parseVerb(g, args, nil, []string{"--all"})
	if err != nil {
		return err
	}
	if vf.bools["help"] || len(vf.args) == 0 {
		fmt.Fprint(io.Stdout, sessionUsage)
		if len(vf.args) == 0 && !vf.bools["help"] {
			return usagef("session needs list or revoke")
		}
		return nil
	}
	e, l, err := config.LoadProcess(g.ConfigFlags())
	if err != nil {
		return err
	}
	dir := approval.DefaultStoreDir()
	id, hasID := approval.SessionID(g.Session, e.Getenv)
	switch vf.args[0] {
	case "list":
		if len(vf.args) > 1 {
			return usagef("session list takes no arguments")
		}
		infos, err := approval.ListSessions(dir)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			if len(infos) == 0 {
				return err
			}
			fmt.Fprintf(io.Stderr, "guardrun: warning: %v\n", err)
		}
		var grants []approval.Grant
		if hasID {
			if st, err := approval.OpenStore(dir, id, l.Cfg.Session.TTL); err == nil {
				grants, _ = st.List()
			}
		}
		if g.json {
			return json.NewEncoder(io.Stdout).Encode(map[string]any{"current": id, "sessions": infos, "grants": grants})
		}
		for _, s := range infos {
			mark := " "
			if s.ID == id {
				mark = "*"
			}
			state := "expires"
			if time.Now().After(s.Expires) {
				state = "expired"
			}
			fmt.Fprintf(io.Stdout, "%s %s  grants: %d  %s: %s\n", mark, s.ID, s.Grants, state, s.Expires.Local().Format(time.DateTime))
		}
		if hasID {
			fmt.Fprintf(io.Stdout, "current session %s:\n", id)
			for _, gr := range grants {
				where := ""
				if gr.Where != "" {
					where = "  (in " + approval.Sanitize(gr.Where) + ")"
				}
				fmt.Fprintf(io.Stdout, "  %s  %-7s %s%s\n", gr.Key[:12], gr.Kind, approval.Sanitize(gr.Summary), where)
			}
		}
		return nil
	case "revoke":
		if !hasID {
			return usagef("no current session: pass --session ID")
		}
		key := ""
		switch {
		case vf.bools["--all"] && len(vf.args) == 1:
			key = "all"
		case !vf.bools["--all"] && len(vf.args) == 2:
			key = vf.args[1]
		default:
			return usagef("session revoke needs a grant key or --all")
		}
		st, err := approval.OpenStore(dir, id, l.Cfg.Session.TTL)
		if err != nil {
			return err
		}
		if key != "all" {
			// Keys are listed shortened; accept a unique prefix.
			list, err := st.List()
			if err != nil {
				return err
			}
			var match []string
			for _, gr := range list {
				if strings.HasPrefix(gr.Key, key) {
					match = append(match, gr.Key)
				}
			}
			if len(match) != 1 {
				return fmt.Errorf("session revoke: %d grants match %q in session %s", len(match), key, id)
			}
			key = match[0]
		}
		if _, err := st.Revoke(key); err != nil {
			return err
		}
		fmt.Fprintf(io.Stdout, "revoked %s in session %s\n", key, id)
		return nil
	}
	return usagef("unknown session command %q (list or revoke)", vf.args[0])
}
