// Package bashoracle checks guardrun's shell analysis against the shell
// that runs the script. It runs a script with real bash (or dash, for a
// config whose shell is sh) inside guardrun's own OS sandbox, traced from
// outside by strace, with harmless stand-ins on PATH for the programs an
// attack would reach (rm, curl, touch, ...), and reports every program
// the shell executed and every file a shell process opened for writing
// that the analysis did not report, for scripts whose verdict is allow.
// Such a disagreement is a way to run something nobody approved.
//
// It never runs a script outside the sandbox: when the sandbox or the
// tracer does not come up, Run returns an error and nothing runs.
//
// The seeds (real agent commands and every class of known difference
// between bash and the parser) and a grammar-aware mutator feed the
// differential fuzz target FuzzBashOracle; `go test` replays the seeds
// and the checked-in corpus.
//
// # Limitations
//
// Only what the trace shows is compared: executed programs (execve) and
// files opened for writing, created, renamed or removed by a shell
// process. Writes by the programs a script runs are theirs to judge (a
// rule that pre-approves a program pre-approves what it writes); reads,
// network use and signals are not compared. A script runs for at most
// a few seconds; what it would do later is not seen. Only Linux.
package bashoracle
