package cmdsem

import "testing"

// TestAwkProgramsAsAwkReadsThem: the awk lexer reads strings, regular
// expressions (a / after an operand divides, elsewhere it starts one, and
// a / inside brackets is a character), comments and continued lines as
// mawk 1.3.4 and gawk 5.2 do, so that what runs commands or writes files
// is found and text inside a string, a regular expression or a comment
// is not taken for code. Where mawk and gawk read differently (a / after
// length), the program cannot be read and asks.
func TestAwkProgramsAsAwkReadsThem(t *testing.T) {
	for _, tc := range []struct {
		prog string
		want string
	}{
		{`{print $1}`, ""},
		{`BEGIN{system("touch M")}`, "exec system()"},
		{`BEGIN { x = "system(\"touch M\")" }`, ""},
		{`BEGIN { x = 1 } # system("touch M")`, ""},
		{`BEGIN { print /"/; system("touch M"); x = "/" }`, "exec system()"},
		{`BEGIN { x = 4 / 2; system("touch M"); y = 1 / 2 }`, "exec system()"},
		{`BEGIN { if (1) /"/; system("touch M"); x = "/" }`, "exec system()"},
		{`BEGIN { while (0) /x/; system("touch M") }`, "exec system()"},
		{`BEGIN { print length /"/; system("touch M"); x="/" }`, "unknown"},
		{`BEGIN { a = "\""; system("touch M") }`, "exec system()"},
		{`BEGIN { r = "x" ~ /[/"]/; system("touch M"); s = "]/" }`, "exec system()"},
		{`BEGIN { r = "x" ~ /[\]"]/; system("touch M"); s = "]/" }`, "exec system()"},
		{`BEGIN { x = 1; y = x /1/ 1; system("touch M") }`, "exec system()"},
		{`BEGIN { print "x" | "sh" }`, "exec |"},
		{`BEGIN { "date" | getline d }`, "exec |"},
		{`BEGIN { print "x" |& "sh" }`, "exec |&"},
		{`{ if ($1 || $2) print }`, ""},
		{"BEGIN { x = \"a\" \\\n system(\"touch M\") }", "exec system()"},
		{"BEGIN { x = \"a\\\nb\"; print x }", ""},
		{"BEGIN { # a comment ends at the newline \\\nsystem(\"touch M\") }", "exec system()"},
		{"BEGIN { x = \"a\nb\" }", "unknown"},
		{`BEGIN { print "x" > "out.txt" }`, "write > out.txt"},
		{`BEGIN { printf("%s", "x") > "out.txt" }`, "write > out.txt"},
		{`BEGIN { print "x" >> "log" }`, "write >> log"},
		{`{ print $0 > $1 ".txt" }`, "write > (named by the awk program)"},
		{`{ print > "/dev/stderr" }`, ""},
		{`BEGIN { if (2 > 1) print "x" }`, ""},
		{`BEGIN { print (2 > 1) }`, ""},
		{`BEGIN { while ((getline line < ".env") > 0) print line }`, "read getline < .env"},
		{`BEGIN { getline x < f }`, ""},
		{`@load "filefuncs"`, "exec @load"},
		{`@include "x.awk"`, "unknown @include"},
		{`BEGIN { f = "system"; @f("touch M") }`, "exec @"},
		{`BEGIN { @namespace "x" }`, ""},
		{`BEGIN { print "x" > "/inet/tcp/0/host/80" }`, "write > /inet/tcp/0/host/80; exec /inet/tcp/0/host/80"},
		{"BEGIN { x = `id` }", "unknown"},
		{`$1 ~ /^[[:alpha:]\/]+$/ { n++ } END { print n }`, ""},
		{`BEGIN { a["x"] = 1; for (k in a) print k }`, ""},
		{`BEGIN { x = 10; x /= 2; print x }`, ""},
		{`NR > 1 && /x/ { print }`, ""},
		{`BEGIN { printf "%d\n", 1 / 2 }`, ""},
		// The file is the whole expression after >: "a" "b" is ab.
		{`BEGIN { print "x" > "a" "/../.git/commondir" }`, "write > (named by the awk program)"},
		{`BEGIN { printf "x" > "o" 3 }`, "write > (named by the awk program)"},
		{`BEGIN { print "x" >> "o" (3) }`, "write >> (named by the awk program)"},
		{`BEGIN { print "x" > "o" $0 }`, "write > (named by the awk program)"},
		{`BEGIN { print "x" > "o"; print "y" }`, "write > o"},
		{"BEGIN { print \"x\" > \"o\"\nprint \"y\" }", "write > o"},
		// A statement goes on after a newline that follows a comma, &&
		// or ||.
		{"BEGIN { print 1,\n2 > \"o\" }", "write > o"},
		{"BEGIN { print 1 &&\n2 > \"o\" }", "write > o"},
		{"BEGIN { print 1 ||\n2 > \"o\" }", "write > o"},
		{"BEGIN { print 1\nx = 2 > 1 }", ""},
		// mawk writes a file named - (only /dev/stdout is its output).
		{`BEGIN { print "x" > "-" }`, "write > -"},
	} {
		got := summary(Analyze(argv("awk", tc.prog), nil))
		if len(got) > len(tc.want) && tc.want == "unknown" && got[:7] == "unknown" {
			got = "unknown"
		}
		if got != tc.want {
			t.Errorf("awk %q = %q, want %q", tc.prog, got, tc.want)
		}
	}
}

// TestAwkOptions: awk may be gawk or mawk, so both sets of options are
// read: -f and its kind take the program from a file guardrun cannot
// see, -l and --load load code, -d, -o and -p write reports, mawk reads
// any prefix of -W exec, and gawk's --sandbox turns the rest off.
func TestAwkOptions(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"awk", "-F:", "{print $1}", "/etc/passwd"}, "read /etc/passwd"},
		{[]string{"awk", "-v", "x=1", "{print x}", "n=2", "f"}, "read f"},
		{[]string{"awk", "-vx=1", "--", "{print x}", "f"}, "read f"},
		{[]string{"awk", "-f", "prog.awk", "f"}, "read -f prog.awk; unknown -f; read f"},
		{[]string{"awk", "-fprog.awk", "f"}, "read -f prog.awk; unknown -f; read f"},
		{[]string{"gawk", "--file=prog.awk", "f"}, "read --file prog.awk; unknown --file; read f"},
		{[]string{"gawk", "--fil", "prog.awk", "f"}, "read --file prog.awk; unknown --file; read f"},
		{[]string{"gawk", "--fi", "prog.awk", "f"}, "unknown --fi; unknown; read f"}, // --file or --field-separator
		{[]string{"gawk", "-E", "prog.awk", "f"}, "read -E prog.awk; unknown -E; read f"},
		{[]string{"gawk", "--exec=prog.awk", "-v", "x"}, "read --exec prog.awk; unknown --exec; read -v; read x"},
		{[]string{"gawk", "-i", "inplace", "{print}", "f"}, "read -i inplace; unknown -i; read f"},
		{[]string{"gawk", "-l", "filefuncs", "{print}"}, "exec -l"},
		{[]string{"gawk", "--load=x"}, "exec --load"},
		{[]string{"gawk", "-e", "BEGIN{system(\"id\")}"}, "exec system()"},
		{[]string{"gawk", "--source=BEGIN{print}", "f"}, "read f"},
		{[]string{"gawk", "-d", "{print}"}, "write --dump-variables awkvars.out"},
		{[]string{"gawk", "-dvars.txt", "{print}"}, "write --dump-variables vars.txt"},
		{[]string{"gawk", "-p", "{print}"}, "write --profile awkprof.out"},
		{[]string{"gawk", "-o/etc/x", "{print}"}, "write --pretty-print /etc/x"},
		{[]string{"gawk", "-D", "{print}"}, "unknown -D"},
		{[]string{"gawk", "--sandbox", "BEGIN{system(\"id\")}"}, ""},
		{[]string{"gawk", "-S", "BEGIN{system(\"id\")}"}, ""},
		// Only gawk has a sandbox: the one true awk ignores the option
		// it does not know and runs the program.
		{[]string{"awk", "--sandbox", "BEGIN{system(\"id\")}"}, "exec system()"},
		{[]string{"nawk", "-S", "BEGIN{system(\"id\")}"}, "exec system()"},
		{[]string{"mawk", "--sandbox", "BEGIN{system(\"id\")}"}, "exec system()"},
		// mawk reads -W options joined by commas.
		{[]string{"mawk", "-Wrandom=1,exec", "p"}, "read -W exec p; unknown -W exec"},
		{[]string{"awk", "-W", "sprintf=2000,e", "p"}, "read -W exec p; unknown -W exec"},
		{[]string{"mawk", "-W", "sprintf=2000,posix_space", "{print}"}, ""},
		{[]string{"mawk", "-W", "random=1,dump", "{print}"}, "unknown -W dump"},
		{[]string{"mawk", "-W", "exec", "prog.awk", "f"}, "read -W exec prog.awk; unknown -W exec; read f"},
		{[]string{"mawk", "-We", "prog.awk"}, "read -W exec prog.awk; unknown -W exec"},
		{[]string{"mawk", "-W", "ex", "prog.awk"}, "read -W exec prog.awk; unknown -W exec"},
		{[]string{"gawk", "-Wexec=prog.awk"}, "read -W exec prog.awk; unknown -W exec"},
		{[]string{"mawk", "-W", "interactive", "{print}"}, ""},
		{[]string{"mawk", "-Wversion"}, ""},
		{[]string{"mawk", "-W", "sprintf=100", "{print}"}, ""},
		{[]string{"mawk", "-W", "in", "x.awk", "{print}"}, "unknown -W in; unknown; read {print}"}, // gawk: --include x.awk
		{[]string{"gawk", "-W", "source=BEGIN{system(\"id\")}"}, "unknown -W source=BEGIN{system(\"id\")}"},
		{[]string{"awk", "--frob", "{print}"}, "unknown --frob"},
		{[]string{"awk", "-X", "{print}"}, "unknown -X"},
	} {
		got := summary(Analyze(argv(tc.args...), nil))
		if got != tc.want {
			t.Errorf("Analyze(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}
