package request

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// A dirReport learns the directory a script's shell ended in, inside the
// sandbox, for Job.ReportDir: an agent's own shell (Claude Code's) keeps
// the directory a command cd'd to for the next command, and a command
// rewritten to run under guardrun would otherwise lose it.
//
// Nothing but the standard descriptors reaches the sandboxed shell, so
// the report travels on standard input: where the job's stdin is
// /dev/null (as an agent gives its commands), the shell gets an empty
// file instead, which reads as end of file just as /dev/null does, and
// an EXIT trap put before the script writes `pwd -P` into it. The file
// is unlinked from guardrun's state directory as soon as it is made; only
// the descriptor exists. A script that sets its own EXIT trap, execs
// another program, or is killed reports nothing, and the agent's shell
// then stays where it was. What the file holds is the script's to write:
// it is read only as a directory name (see finish).
type dirReport struct {
	file *os.File
}

// dirReportTrap is put before the script, on a line of its own.
const dirReportTrap = "trap 'pwd -P >&0 2>/dev/null' EXIT\n"

// newDirReport is a report for a job whose stdin is stdin, or nil where
// none can be made (stdin is not /dev/null, no state directory).
func newDirReport(stdin io.Reader, stateDir string) *dirReport {
	f, ok := stdin.(*os.File)
	if !ok || f == nil || stateDir == "" {
		return nil
	}
	fi, err := f.Stat()
	if err != nil {
		return nil
	}
	null, err := os.Stat(os.DevNull)
	if err != nil || !os.SameFile(fi, null) {
		return nil
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return nil
	}
	tmp, err := os.CreateTemp(stateDir, ".cwd-*")
	if err != nil {
		return nil
	}
	os.Remove(tmp.Name())
	return &dirReport{file: tmp}
}

// argv is the shell's argv with the trap before the script, which stands
// at argv[2+opts] (program, options, -c, script).
func (r *dirReport) argv(argv []string, opts int) []string {
	out := append([]string(nil), argv...)
	out[2+opts] = dirReportTrap + out[2+opts]
	return out
}

// maxDirReport bounds what is read back: a path, not the script's output.
const maxDirReport = 64 << 10

// finish passes the last line the shell wrote, when it names a directory
// by an absolute path, to report, and closes the file.
func (r *dirReport) finish(report func(string)) {
	defer r.file.Close()
	if _, err := r.file.Seek(0, io.SeekStart); err != nil {
		return
	}
	b, err := io.ReadAll(io.LimitReader(r.file, maxDirReport))
	if err != nil {
		return
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	dir := string(lines[len(lines)-1])
	if !filepath.IsAbs(dir) || strings.ContainsAny(dir, "\x00\r") {
		return
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return
	}
	report(filepath.Clean(dir))
}
