package web

import (
	"strings"
	"testing"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/broker"
	"github.com/guardrun/guardrun/rules"
)

// A hostile request renders as text: control and invisible characters
// as the terminal's escapes, markup escaped, the asking command marked,
// a diff's own colours as classes and any other escape as text.
func TestCardEscapesHostileText(t *testing.T) {
	script := "echo ok; rm -rf x\x1b[2K\u202e\u200b </script><img src=x onerror=alert(1)>"
	detail := approval.DiffDetail("f.txt", []byte("a\n"), []byte("b\x1b]0;owned\x07\n"), approval.Style{Color: true})
	p := &broker.Pending{ID: "id-1", Request: broker.Request{
		Display: script, Cwd: "/w\u202e", Detail: detail,
		Parts: []rules.Part{
			{Kind: "command", Text: "echo ok", Decision: rules.Allow, Pos: "1:1"},
			{Kind: "command", Text: script[9:], Decision: rules.Ask, Pos: "1:10", Reason: "<b>bold</b> reason", Rule: "rm"},
		},
	}, Asker: "pid 7: <script>x</script>"}
	html := renderCard(p).HTML
	for _, bad := range []string{"<img", "<script>", "</script>", "<b>", "\x1b", "\u202e", "\u200b", "\x07"} {
		if strings.Contains(html, bad) {
			t.Errorf("the card holds %q raw:\n%s", bad, html)
		}
	}
	for _, want := range []string{`\x1b[2K`, `\u202e`, `\u200b`, "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;", "&lt;b&gt;bold&lt;/b&gt; reason",
		`<mark>rm -rf x`, `\x1b]0;owned\x07`, `class="dl del"`, `class="dl add"`, `/w\u202e`} {
		if !strings.Contains(html, want) {
			t.Errorf("the card lacks %q:\n%s", want, html)
		}
	}
	if strings.Contains(html, "<mark>echo ok") {
		t.Error("an allowed part is marked")
	}
}
