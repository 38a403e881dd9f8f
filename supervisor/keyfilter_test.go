package supervisor

import "testing"

func TestKeyFilter(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "yn\r", "yn\r"},
		{"utf-8 note", "café\r", "café\r"},
		{"x10 mouse", "\x1b[M ys" + "n", "n"},
		{"sgr mouse", "\x1b[<0;121;5Mn", "n"},
		{"focus", "\x1b[I\x1b[On", "n"},
		{"arrow keys", "\x1b[A\x1bOBn", "n"},
		{"bracketed paste", "\x1b[200~yes\x1b[201~n", "n"},
		{"osc with bel", "\x1b]11;rgb:0/0/0\x07n", "n"},
		{"osc with st", "\x1b]11;y\x1b\\n", "n"},
		{"alt key", "\x1byn", "n"},
		{"ctrl-c stays", "\x03", "\x03"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f keyFilter
			if got := string(f.filter([]byte(tc.in), nil)); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			// The same, a byte at a time: sequences split across reads.
			f = keyFilter{}
			var got []byte
			for i := 0; i < len(tc.in); i++ {
				got = f.filter([]byte{tc.in[i]}, got)
			}
			if string(got) != tc.want {
				t.Errorf("byte by byte: got %q, want %q", got, tc.want)
			}
		})
	}
}
