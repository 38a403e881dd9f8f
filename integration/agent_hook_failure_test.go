//go:build linux

package integration

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/guardrun/guardrun/internal/testing/fakemodel"
)

// TestAgentsRefuseACommandTheHookStopsOn: a command whose first line
// would make a file outside every zone, followed by a megabyte of
// nesting that stops guardrun's hook with exit status 2 (its stack
// bound), is refused by each agent: the first line never runs.
func TestAgentsRefuseACommandTheHookStopsOn(t *testing.T) {
	for _, a := range agentsUnderTest {
		t.Run(a.Name, func(t *testing.T) {
			var marker string
			r := newRigWith(t, a, openRules, func(r *rig) []fakemodel.Step {
				marker = filepath.Join(filepath.Dir(r.w.Home), "ran-outside")
				return []fakemodel.Step{
					a.Shell("echo ran > " + marker + "\n" + strings.Repeat("if ", 349_000)),
					a.Shell("echo after"),
					fakemodel.Say("done"),
				}
			})
			if out, code := r.guardrun("integrate", r.agentName()); code != 0 {
				t.Fatalf("integrate: %d %s", code, out)
			}
			out := r.run()
			res := r.result(0)
			t.Logf("step 0: %.300q", res)
			type outcome struct{ RanOutside, Refused, Next bool }
			got := outcome{
				RanOutside: fileExists(marker),
				Refused:    strings.Contains(res, "stack overflow") || strings.Contains(res, "guardrun:"),
				Next:       strings.Contains(r.result(1), "after"),
			}
			if diff := cmp.Diff(got, outcome{Refused: true, Next: true}); diff != "" {
				t.Errorf("%s (-got +want):\n%s\noutput:\n%.2000s", a.Name, diff, out)
			}
		})
	}
}
