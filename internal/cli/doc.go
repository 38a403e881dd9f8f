// Package cli is guardrun's command line: the sh-compatible front (-c, -lc,
// -l, argv[0] with a leading '-'), the verbs, their flags, help and
// output. The flow a request goes through (config and trust, decision,
// approval, sandbox, run, audit) is package internal/request, which the
// verbs call. It is the one package that knows every other; errors are
// mapped to exit statuses only here (77 refused, 125 guardrun failed, 2
// usage).
package cli
