//go:build linux

package bashoracle

import (
	"os"
	"strings"
	"testing"
)

func TestZZProbe(t *testing.T) {
	b, err := os.ReadFile("/tmp/t12x/probes.txt")
	if err != nil {
		t.Skip()
	}
	for _, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		src := strings.NewReplacer(`\\n`, "\\n", `\n`, "\n", `\r`, "\r", `\f`, "\f", `\v`, "\v", `\t`, "\t", `\N`, "\u00a0", `\\`, `\`).Replace(line)
		for _, prog := range []string{"/bin/bash", "/bin/sh"} {
			out := check(t, prog, src)
			t.Logf("%-9s %-5s ran=%v %q :: %s", prog, out.Decision.Decision, out.Ran, src, out.Decision.Reason)
		}
	}
}
