package cmdsem

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Option variables: programs that read options from the environment as
// if they were written on their command line (TAR_OPTIONS=... tar, LESS
// for less and the pager git and man start, XZ_OPT for the xz that tar
// runs). An assignment to one is judged by the options it holds, where
// it is made: a variable set now may reach the program much later (an
// export that a shell carries to the next command, a script that runs
// tar).

// optionVars maps each option variable to the program that reads it.
var optionVars = map[string]string{
	"TAR_OPTIONS":    "tar",
	"LESS":           "less",
	"SYSTEMD_LESS":   "less",
	"MORE":           "more",
	"GREP_OPTIONS":   "grep",
	"MANOPT":         "man",
	"XZ_DEFAULTS":    "xz",
	"XZ_OPT":         "xz",
	"GZIP":           "gzip",
	"BZIP2":          "bzip2",
	"BZIP":           "bzip2",
	"ZSTD_CLEVEL":    "zstd",
	"ZSTD_NBTHREADS": "zstd",
	"PARALLEL":       "parallel",
}

// OptionVariable reports whether a program reads options from the
// variable, and which.
func OptionVariable(name string) (program string, ok bool) {
	program, ok = optionVars[name]
	return program, ok
}

// compressorOptions are the compressor options an option variable may
// hold: levels, threads, quiet and verbose. Others (xz --files=F, which
// makes xz work on the files F names) ask.
var compressorOptions = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(-[0-9]+|-[0-9]*[eqvnN]+|-T ?[0-9]+|--threads=[0-9]+|--fast|--best|--rsyncable|--extreme|--quiet|--verbose|--memlimit(-compress|-decompress)?=[0-9]+[KMG%]?i?B?)$`)
})

// OptionEffects says why the options an option variable holds ask, or
// "" when they are harmless: value is the assigned value, nil when it is
// not known (read, mapfile, a for loop).
func OptionEffects(name string, value *Arg) string {
	prog, ok := optionVars[name]
	if !ok {
		return ""
	}
	if value == nil || !value.Static {
		return fmt.Sprintf("%s holds options %s reads as if written on its command line, and the value is not known until run time", name, prog)
	}
	words := strings.Fields(value.Value)
	if len(words) == 0 {
		return ""
	}
	if strings.ContainsAny(value.Value, "\"'\\$`") {
		// tar splits TAR_OPTIONS as a shell would, quotes and
		// backslashes removed: guardrun would read other words.
		return fmt.Sprintf("%s holds options for %s with quotes or backslashes, which %s reads differently from guardrun", name, prog, prog)
	}
	switch prog {
	case "zstd":
		return "" // a number; zstd ignores anything else
	case "xz", "gzip", "bzip2":
		for _, w := range words {
			if !compressorOptions().MatchString(w) {
				return fmt.Sprintf("%s holds %s for %s, which is not a level or thread count guardrun knows to be harmless", name, w, prog)
			}
		}
		return ""
	case "less", "more":
		// LESS=FRX is -F -R -X: the leading dash is optional.
		if !strings.HasPrefix(words[0], "-") && !strings.HasPrefix(words[0], "+") {
			words[0] = "-" + words[0]
		}
	}
	if !Known(prog) {
		return fmt.Sprintf("%s holds options for %s, which guardrun does not know", name, prog)
	}
	argv := []Arg{{Value: prog, Static: true}}
	for _, w := range words {
		argv = append(argv, Arg{Value: w, Static: true})
	}
	for _, e := range Analyze(argv, nil) {
		if e.Terminal {
			continue // the pager's keyboard: judged where it runs
		}
		what := e.Option
		if what == "" {
			what = e.Path
		}
		return fmt.Sprintf("%s holds options %s reads as if written on its command line: %s %s", name, prog, what, strings.TrimPrefix(e.Why, prog+" "))
	}
	return ""
}
