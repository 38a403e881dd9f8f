package approval

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// These measure what every decided command pays for the audit log and
// session memory; the budget for all of guardrun's overhead is 2 ms.

func BenchmarkAuditAppend(b *testing.B) {
	for _, size := range []struct {
		name   string
		script string
	}{
		{"typical", "git status && go test ./..."},
		{"64KiB_script", strings.Repeat("echo hello world\n", 64<<10/17)},
	} {
		b.Run(size.name, func(b *testing.B) {
			a := OpenAudit(filepath.Join(b.TempDir(), "audit.jsonl"))
			exit := 0
			r := Record{Session: "tty:34816:1234:5678", Cwd: "/home/u/project", Script: size.script,
				Verdict: "ask", Outcome: "ran", DecidedBy: "person", Rule: "go-test", Reason: "runs code",
				Sandbox: "bwrap", Exit: &exit, DurationMS: 812.5}
			b.ReportAllocs()
			for b.Loop() {
				if err := a.Append(r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkAuditAppendParallel(b *testing.B) {
	a := OpenAudit(filepath.Join(b.TempDir(), "audit.jsonl"))
	r := Record{Session: "s", Cwd: "/w", Script: "ls", Verdict: "allow", Outcome: "ran", DecidedBy: "rule"}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := a.Append(r); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkStoreHas(b *testing.B) {
	for _, n := range []int{0, 10, 100, maxGrants} {
		b.Run(fmt.Sprintf("grants=%d", n), func(b *testing.B) {
			s, err := OpenStore(b.TempDir(), "tty:34816:1234:5678", 0)
			if err != nil {
				b.Fatal(err)
			}
			key := CommandKey([][]string{{"cmd", "git", "push"}}, []string{"git-push"})
			for i := range n {
				k := CommandKey([][]string{{"cmd", "echo", fmt.Sprint(i)}}, []string{""})
				if i == n-1 {
					k = key
				}
				if err := s.Add(Grant{Key: k, Kind: "command", Summary: "echo " + fmt.Sprint(i)}); err != nil {
					b.Fatal(err)
				}
			}
			miss := CommandKey([][]string{{"cmd", "rm", "-rf", "x"}}, []string{"rm"})
			b.Run("hit", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, ok, err := s.Has(key); err != nil || ok != (n > 0) {
						b.Fatalf("Has = %v, %v", ok, err)
					}
				}
			})
			b.Run("miss", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, ok, err := s.Has(miss); err != nil || ok {
						b.Fatalf("Has = %v, %v", ok, err)
					}
				}
			})
		})
	}
}

func BenchmarkStoreAdd(b *testing.B) {
	s, err := OpenStore(b.TempDir(), "s", 0)
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		i++
		// A bounded key set keeps the file at a realistic size.
		if err := s.Add(Grant{Key: fmt.Sprint(i % 50), Kind: "command"}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCommandKey(b *testing.B) {
	argv := [][]string{{"cmd", "git", "commit", "-m", "a message of some length"}, {"file", "write", "cwd", "out.txt"}}
	rule := []string{"git", ""}
	for b.Loop() {
		CommandKey(argv, rule)
	}
}

func BenchmarkSessionID(b *testing.B) {
	none := func(string) string { return "" }
	for b.Loop() {
		SessionID("", none)
	}
}
