package trace

import (
	"bytes"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

func TestPhases(t *testing.T) {
	defer func(e bool) { enabled = e }(enabled)

	enabled = false
	Begin()
	Phase("off")()
	var b bytes.Buffer
	Print(&b)
	if b.Len() != 0 {
		t.Errorf("printed without GUARDRUN_TRACE=1: %q", b.String())
	}

	enabled = true
	Begin()
	end := Phase("config")
	end()
	Phase("sandbox check")()
	Print(&b)
	re := regexp.MustCompile(`(?m)^guardrun: trace: config +\+ *[0-9.]+ms +[0-9.]+ms\nguardrun: trace: sandbox check +\+ *[0-9.]+ms +[0-9.]+ms\nguardrun: trace: total \(main\) +[0-9.]+ms\n(guardrun: trace: cpu \(process\) +[0-9.]+ms \(children waited for: [0-9.]+ms\)\n)?guardrun: trace: allocated +[0-9]+KB in [0-9]+ objects \(heap [0-9]+KB, [0-9]+ collections\)\n$`)
	if !re.MatchString(b.String()) {
		t.Errorf("trace output:\n%s", b.String())
	}
	if runtime.GOOS == "linux" || runtime.GOOS == "darwin" {
		if !strings.Contains(b.String(), "guardrun: trace: cpu (process)") {
			t.Errorf("no CPU line:\n%s", b.String())
		}
	}
	b.Reset()
	Print(&b)
	if bytes.Contains(b.Bytes(), []byte("config")) {
		t.Errorf("phases printed twice:\n%s", b.String())
	}
}
