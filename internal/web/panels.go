package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"slices"
	"strings"

	"github.com/guardrun/guardrun/approval"
)

// historyLimit is how many records the history shows at most.
const historyLimit = 200

type historyRow struct {
	approval.Record
	What string
}

type grantRow struct {
	Session string
	approval.Grant
}

type panelData struct {
	History     []historyRow
	HistoryErr  string
	Verdict     string
	Outcome     string
	Query       string
	Grants      []grantRow
	GrantsErr   string
	Rules       []approval.ProjectRule
	RulesErr    string
	Checkpoints []Checkpoint
	CheckErr    string
	HasCheck    bool
}

// panels renders the sections that are read on demand: the history
// (filtered by verdict, outcome and text), the session grants, the
// project rules and the checkpoints, as HTML fragments in one JSON
// object.
func (s *Server) panels(w http.ResponseWriter, r *http.Request, _ *session) {
	q := r.URL.Query()
	d := panelData{Verdict: q.Get("verdict"), Outcome: q.Get("outcome"), Query: q.Get("q"), HasCheck: s.cfg.Checkpoints != nil}
	d.History, d.HistoryErr = s.history(d.Verdict, d.Outcome, d.Query)
	d.Grants, d.GrantsErr = s.grants()
	if s.cfg.Rules != nil {
		rs, err := s.cfg.Rules.List()
		d.Rules = rs
		if err != nil {
			d.RulesErr = err.Error()
		}
	}
	if s.cfg.Checkpoints != nil {
		cs, err := s.cfg.Checkpoints.List(r.Context())
		d.Checkpoints = cs
		if err != nil {
			d.CheckErr = err.Error()
		}
	}
	out := map[string]string{}
	for _, name := range []string{"history", "grants", "rules", "checkpoints"} {
		var b bytes.Buffer
		if err := templates.ExecuteTemplate(&b, name+".html", d); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		out[name] = b.String()
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out)
}

func (s *Server) history(verdict, outcome, query string) ([]historyRow, string) {
	if s.cfg.AuditPath == "" {
		return nil, ""
	}
	recs, err := approval.ReadAudit(s.cfg.AuditPath, approval.Filter{})
	msg := ""
	var bad *approval.MalformedError
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case errors.As(err, &bad):
		msg = err.Error()
	case err != nil:
		return nil, err.Error()
	}
	recs = approval.JoinRuns(recs)
	query = strings.ToLower(query)
	var out []historyRow
	for i := len(recs) - 1; i >= 0 && len(out) < historyLimit; i-- {
		rec := recs[i]
		if verdict != "" && rec.Verdict != verdict || outcome != "" && rec.Outcome != outcome {
			continue
		}
		what := rec.Script
		switch {
		case rec.Argv != nil:
			what = strings.Join(rec.Argv, " ")
		case rec.Op != "":
			what = rec.Op + " " + rec.Path
		}
		if query != "" && !strings.Contains(strings.ToLower(what+"\n"+rec.Note+"\n"+rec.Cwd+"\n"+rec.Reason), query) {
			continue
		}
		out = append(out, historyRow{Record: rec, What: what})
	}
	return out, msg
}

func (s *Server) grants() ([]grantRow, string) {
	if s.cfg.StoreDir == "" {
		return nil, ""
	}
	infos, err := approval.ListSessions(s.cfg.StoreDir)
	msg := ""
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		msg = err.Error()
	}
	var out []grantRow
	for _, in := range infos {
		st, err := approval.OpenStore(s.cfg.StoreDir, in.ID, s.cfg.SessionTTL)
		if err != nil {
			continue
		}
		gs, _ := st.List()
		for _, g := range gs {
			out = append(out, grantRow{Session: in.ID, Grant: g})
		}
	}
	slices.SortFunc(out, func(a, b grantRow) int { return b.Created.Compare(a.Created) })
	return out, msg
}

func (s *Server) revokeGrant(w http.ResponseWriter, r *http.Request, _ *session) {
	id, key := r.PostForm.Get("session"), r.PostForm.Get("grant")
	if s.cfg.StoreDir == "" || id == "" || key == "" {
		http.Error(w, "guardrun web: a session and a grant", http.StatusBadRequest)
		return
	}
	st, err := approval.OpenStore(s.cfg.StoreDir, id, s.cfg.SessionTTL)
	if err != nil {
		http.Error(w, "guardrun web: "+err.Error(), http.StatusInternalServerError)
		return
	}
	if key == "all" {
		http.Error(w, "guardrun web: one grant at a time", http.StatusBadRequest)
		return
	}
	ok, err := st.Revoke(key)
	switch {
	case err != nil:
		http.Error(w, "guardrun web: "+err.Error(), http.StatusInternalServerError)
	case !ok:
		http.Error(w, "guardrun web: no such grant", http.StatusConflict)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

func (s *Server) revokeRule(w http.ResponseWriter, r *http.Request, _ *session) {
	project, pattern := r.PostForm.Get("project"), r.PostForm.Get("pattern")
	if s.cfg.Rules == nil || project == "" || pattern == "" {
		http.Error(w, "guardrun web: a project and a pattern", http.StatusBadRequest)
		return
	}
	n, err := s.cfg.Rules.Revoke(project, pattern)
	switch {
	case err != nil:
		http.Error(w, "guardrun web: "+err.Error(), http.StatusInternalServerError)
	case n == 0:
		http.Error(w, "guardrun web: no such rule", http.StatusConflict)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

func (s *Server) undo(w http.ResponseWriter, r *http.Request, _ *session) {
	if s.cfg.Checkpoints == nil {
		http.Error(w, "guardrun web: checkpoints are not available", http.StatusNotFound)
		return
	}
	if err := s.cfg.Checkpoints.Undo(r.Context(), r.PostForm.Get("id")); err != nil {
		http.Error(w, "guardrun web: "+err.Error(), http.StatusConflict)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
