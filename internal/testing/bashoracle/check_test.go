package bashoracle

import (
	"strings"
	"testing"

	"github.com/guardrun/guardrun/shellparse"
)

func mustParse(t *testing.T, src string) *shellparse.Script {
	t.Helper()
	s, err := shellparse.Parse(src, shellparse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestParseTrace(t *testing.T) {
	h := func(s string) string {
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			b.WriteString(`\x`)
			b.WriteString("0123456789abcdef"[s[i]>>4 : s[i]>>4+1])
			b.WriteString("0123456789abcdef"[s[i]&15 : s[i]&15+1])
		}
		return `"` + b.String() + `"`
	}
	log := strings.Join([]string{
		`10 execve(` + h("/usr/bin/bwrap") + `, [` + h("bwrap") + `], 0x1 /* 3 vars */) = 0`,
		`11 execve(` + h("/bin/bash") + `, [` + h("bash") + `, ` + h("-c") + `, ` + h("x") + `], 0x1 /* 3 vars */) = 0`,
		`11 clone(child_stack=NULL, flags=SIGCHLD <unfinished ...>`,
		`11 <... clone resumed>) = 12`,
		`12 openat(AT_FDCWD, ` + h("out.txt") + `, O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3`,
		`12 openat(AT_FDCWD, ` + h("in.txt") + `, O_RDONLY) = 3`,
		`12 execve(` + h("/s/touch") + `, [` + h("touch") + `, ` + h("p") + `], 0x1 /* 3 vars */) = 0`,
		`12 openat(AT_FDCWD, ` + h("p") + `, O_WRONLY|O_CREAT, 0666) = 3`,
		// A child's first call printed before its parent's clone returns.
		`13 openat(AT_FDCWD, ` + h("late.txt") + `, O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3`,
		`11 clone(child_stack=NULL, flags=SIGCHLD) = 2 /* 13 in strace's PID NS */`,
		`11 execve(` + h("/nope") + `, [` + h("nope") + `], 0x1 /* 3 vars */) = -1 ENOENT (No such file or directory)`,
	}, "\n")
	tr := parseTrace(strings.NewReader(log), "/bin/bash", "/ws")
	if !tr.Started || len(tr.Execs) != 1 || tr.Execs[0].Path != "/s/touch" || strings.Join(tr.Execs[0].Argv, " ") != "touch p" || tr.Execs[0].By != "bash" {
		t.Fatalf("execs: %+v", tr)
	}
	if len(tr.Writes) != 3 || tr.Writes[0].Path != "/ws/out.txt" || tr.Writes[0].By != "bash" || tr.Writes[1].By != "touch" || tr.Writes[2].By != "bash" {
		t.Fatalf("writes: %+v", tr.Writes)
	}
	misses := Compare(mustParse(t, "touch p; echo > out.txt; echo > late.txt"), tr, "/ws")
	if len(misses) != 0 {
		t.Errorf("misses for a script that reports both: %v", misses)
	}
	misses = Compare(mustParse(t, "touch q"), tr, "/ws")
	if len(misses) != 3 {
		t.Errorf("misses = %v, want the touch p and the writes to out.txt and late.txt", misses)
	}
}

func TestMutateDeterministic(t *testing.T) {
	for i, s := range Seeds {
		ops := []byte{byte(i), byte(i * 3), byte(i * 5), byte(i * 11)}
		if a, b := Mutate(s, ops), Mutate(s, ops); a != b {
			t.Fatalf("seed %d: mutation is not deterministic", i)
		}
		if strings.Join(tokens(s), "") != s {
			t.Fatalf("seed %d: tokens do not join back", i)
		}
	}
}
