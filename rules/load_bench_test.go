package rules

import "testing"

// BenchmarkLoadDefault is what each guardrun process spends on the
// embedded default config: parse, validate and compile.
func BenchmarkLoadDefault(b *testing.B) {
	env := Env{Cwd: "/w", Home: "/h", StateDir: "/s"}
	for b.Loop() {
		c := Default(env)
		if _, err := New(c, env.Home); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseDefault(b *testing.B) {
	env := Env{Cwd: "/w", Home: "/h", StateDir: "/s"}
	for b.Loop() {
		Default(env)
	}
}
