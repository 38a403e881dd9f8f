package approval

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/guardrun/guardrun/rules"
)

// A prompt fitted to a screen keeps the asking parts before the script,
// counts those it cannot show, and cuts long lines with a count: it never
// takes more rows than it has.
func TestRenderFitsTheScreen(t *testing.T) {
	var parts []rules.Part
	var script strings.Builder
	for i := 1; i <= 26; i++ {
		text := fmt.Sprintf("touch f%d", i)
		parts = append(parts, rules.Part{Kind: "command", Text: text, Decision: rules.Ask, Reason: "needs approval"})
		script.WriteString(text + "\n")
	}
	script.WriteString("echo " + strings.Repeat("x", 3500) + "\n")
	r := &Request{Display: script.String(), Decision: &rules.Decision{Decision: rules.Ask, Parts: parts}, Cwd: "/w", Sandbox: "workspace /w (rw)"}
	st := Style{Rows: 24, Cols: 120}
	lines := renderLines(r, st)
	used := 0
	for _, l := range lines {
		used += screenRows(l, st.Cols)
		if screenRows(l, st.Cols) > maxRowsPerLine {
			t.Errorf("a line takes %d rows", screenRows(l, st.Cols))
		}
	}
	if used > st.Rows {
		t.Errorf("the prompt takes %d rows of %d:\n%s", used, st.Rows, strings.Join(lines, "\n"))
	}
	out := strings.Join(lines, "\n")
	m := regexp.MustCompile(`… (\d+) more parts that need approval`).FindStringSubmatch(out)
	shown := strings.Count(out, "  • touch f")
	if m == nil || shown == 0 || fmt.Sprint(26-shown) != m[1] {
		t.Errorf("asking parts shown %d, counted hidden %v:\n%s", shown, m, out)
	}
	if strings.Index(out, "  • touch f1") > strings.Index(out, "$ ") && strings.Contains(out, "$ ") {
		t.Error("the script comes before the asking parts")
	}
	// Without a screen the long line is cut only by MaxLines.
	if !strings.Contains(Render(r, Style{}), "touch f20") {
		t.Error("unfitted render lost parts")
	}
	if c := clip("echo "+strings.Repeat("x", 3500), 120); displayWidth(c) > 3*120 || !strings.Contains(c, "more characters") {
		t.Errorf("clip: width %d: %q", displayWidth(c), c[len(c)-60:])
	}
}
