// Package cli is guardrun's command line: the sh-compatible front (-c, -lc,
// -l, argv[0] with a leading '-'), the verbs, config discovery, and the
// wiring of policy, approval and the sandbox runner. It is the one package
// that knows every other; errors are mapped to exit statuses only here
// (77 refused, 125 guardrun failed, 2 usage).
package cli
