package web

import (
	"bytes"
	"embed"
	"html/template"
	"strconv"
	"strings"
	"time"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/broker"
	"github.com/guardrun/guardrun/rules"
)

// What the page shows of a request is what the terminal prompt shows,
// held to the same integrity rules: every string from a request passes
// through approval.Sanitize (control and invisible characters, bidi
// controls and look-alike letters shown as escapes) before
// html/template escapes it for HTML. Nothing from a request reaches the
// page as markup: the only markup is the templates', and the only
// styling of a diff the SGR colours guardrun's own renderer writes,
// turned into classes here.

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

var templates = template.Must(template.New("").Funcs(template.FuncMap{
	"clean": func(s string) string { return approval.Sanitize(s) },
	"line":  func(s string) string { return approval.Sanitize(strings.ReplaceAll(s, "\n", " ⏎ ")) },
	"when":  func(t time.Time) string { return t.Local().Format("15:04:05") },
	"day":   func(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05") },
}).ParseFS(templateFiles, "templates/*.html"))

// cardEvent is a pending request as the page receives it: its card,
// rendered here, and what a notification says.
type cardEvent struct {
	ID      string `json:"id"`
	HTML    string `json:"html"`
	Summary string `json:"summary"`
	Always  bool   `json:"always"`
	Session bool   `json:"session"`
}

type cardData struct {
	ID          string
	Received    time.Time
	Asker       string
	For         string // the process a relay asked for
	Cwd         string
	Parts       []partData
	Script      []approval.Segment
	Detail      []detailLine
	Sandbox     string
	CanRemember bool
	Always      string
	Project     string
}

type partData struct {
	Text, Rule, Reason string
	Finding            bool
}

func renderCard(p *broker.Pending) cardEvent {
	d := cardData{
		ID: p.ID, Received: p.Received, Asker: p.Asker, Cwd: p.Cwd, Sandbox: p.Sandbox,
		CanRemember: p.CanRemember, Always: p.Always, Project: p.Project,
		Script: approval.SanitizeMarked(p.Display, marks(p.Display, p.Parts)),
		Detail: detailLines(p.Detail),
	}
	if p.Via != "" && p.PID != 0 && p.PID != p.AskerPID {
		d.For = "for pid " + strconv.Itoa(p.PID) + ": " + strings.Join(p.Command, " ") + " (as " + p.Via + " says)"
	}
	for _, part := range p.Parts {
		if part.Decision == rules.Ask {
			d.Parts = append(d.Parts, partData{Text: part.Text, Rule: part.Rule, Reason: part.Reason, Finding: part.Kind == "finding"})
		}
	}
	var b bytes.Buffer
	if err := templates.ExecuteTemplate(&b, "card.html", d); err != nil {
		b.Reset()
		template.HTMLEscape(&b, []byte("guardrun web: cannot show this request: "+err.Error()))
	}
	sum := p.Summary
	if sum == "" {
		sum = p.Display
	}
	return cardEvent{ID: p.ID, HTML: b.String(), Summary: approval.Sanitize(firstLine(sum, 120)), Always: p.Always != "", Session: p.CanRemember}
}

func firstLine(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ⏎ ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n-1]) + "…"
	}
	return s
}

// marks are the byte ranges of display that the asking commands take:
// a part whose position (line:col) in the script starts its text.
func marks(display string, parts []rules.Part) [][2]int {
	lineStart := []int{0}
	for i := 0; i < len(display); i++ {
		if display[i] == '\n' {
			lineStart = append(lineStart, i+1)
		}
	}
	var out [][2]int
	for _, p := range parts {
		if p.Decision != rules.Ask || p.Kind != "command" || p.Text == "" {
			continue
		}
		ls, cs, ok := strings.Cut(p.Pos, ":")
		if !ok {
			continue
		}
		line, err1 := strconv.Atoi(ls)
		col, err2 := strconv.Atoi(cs)
		if err1 != nil || err2 != nil || line < 1 || line > len(lineStart) || col < 1 {
			continue
		}
		off := lineStart[line-1] + col - 1
		if off >= len(display) || !strings.HasPrefix(display[off:], p.Text) {
			continue
		}
		m := [2]int{off, off + len(p.Text)}
		// In order, without overlaps: a part inside another (a
		// substitution) stays inside its mark.
		if n := len(out); n > 0 && m[0] < out[n-1][1] {
			continue
		}
		out = append(out, m)
	}
	sortMarks(out)
	return out
}

func sortMarks(m [][2]int) {
	for i := 1; i < len(m); i++ {
		for j := i; j > 0 && m[j][0] < m[j-1][0]; j-- {
			m[j], m[j-1] = m[j-1], m[j]
		}
	}
}

// detailLine is one line of a file operation's presentation, in runs of
// one style each.
type detailLine struct {
	Runs  []detailRun
	Class string // add, del, hunk, head: the line's own kind
}

type detailRun struct {
	Text  string
	Class string
}

// detailLines turns a detail (approval.DiffDetail, NewFileDetail) into
// styled lines: SGR sequences (ESC [ digits ; m) become classes, and
// the text between them is sanitized, so any other escape, however it
// got there, shows as text.
func detailLines(detail string) []detailLine {
	if detail == "" {
		return nil
	}
	var out []detailLine
	hunks := false
	for _, raw := range strings.Split(strings.TrimRight(detail, "\n"), "\n") {
		var l detailLine
		class := ""
		for raw != "" {
			i := strings.Index(raw, "\x1b[")
			j := -1
			if i >= 0 {
				j = sgrEnd(raw[i+2:])
			}
			if i < 0 || j < 0 {
				l.Runs = appendRun(l.Runs, approval.Sanitize(raw), class)
				break
			}
			if i > 0 {
				l.Runs = appendRun(l.Runs, approval.Sanitize(raw[:i]), class)
			}
			class = sgrClass(raw[i+2 : i+2+j])
			raw = raw[i+2+j+1:]
		}
		if len(l.Runs) > 0 {
			// A diff's lines by their first character, once its first
			// hunk began (drawn without colour, NO_COLOR, they carry
			// no classes).
			t := l.Runs[0].Text
			if strings.HasPrefix(t, "@@ ") {
				hunks = true
			}
			switch {
			case hunks && strings.HasPrefix(t, "@@"):
				l.Class = "hunk"
			case hunks && strings.HasPrefix(t, "-"):
				l.Class = "del"
			case hunks && strings.HasPrefix(t, "+"):
				l.Class = "add"
			}
		}
		out = append(out, l)
	}
	return out
}

func appendRun(rs []detailRun, text, class string) []detailRun {
	if text == "" {
		return rs
	}
	return append(rs, detailRun{Text: text, Class: class})
}

// sgrEnd is the index of the m that ends an SGR sequence's parameters
// (digits and ;) at the start of s, or -1.
func sgrEnd(s string) int {
	for i := 0; i < len(s) && i < 16; i++ {
		switch c := s[i]; {
		case c == 'm':
			return i
		case c >= '0' && c <= '9' || c == ';':
		default:
			return -1
		}
	}
	return -1
}

// sgrClass names the classes of an SGR sequence's parameters: c1 bold,
// c2 dim, c31 red...; 0 (or nothing) is plain.
func sgrClass(params string) string {
	var cs []string
	for _, p := range strings.Split(params, ";") {
		if p == "" || p == "0" {
			cs = cs[:0]
			continue
		}
		if n, err := strconv.Atoi(p); err == nil && n < 110 {
			cs = append(cs, "c"+p)
		}
	}
	return strings.Join(cs, " ")
}
