package request

import (
	"fmt"
	"os"
	"strings"
	"syscall"
)

// agentCwd writes, for Claude Code, the directory the command's shell
// ended in (dir, as the shell reported it: see dirReport) to the file
// the wrapper names, which its `pwd -P >| FILE` would have written, so
// that `cd sub` in one command moves the next. The sandbox cannot write
// there; guardrun does, after a command that exited 0 (the wrapper
// writes it only then). Where nothing was reported (the command's input
// was not /dev/null, it set its own EXIT trap or exec'd), the file is
// left alone, as after a failed command, and Claude Code's next command
// starts where this one did.
func (s *Session) agentCwd(j *Job, dir string, io IO) {
	if err := writeCwdFile(j.Wrapper.CwdFile, dir); err != nil {
		fmt.Fprintf(io.Stderr, "guardrun: warning: %s's working directory was not passed on: %v\n", j.Wrapper.Agent.Title, err)
	}
}

// writeCwdFile writes dir and a newline to path, as `pwd -P >| path`
// would, to a regular file of this user only: it never follows a link
// (the file lies in a shared temporary directory) and truncates only
// what it checked.
func writeCwdFile(path, dir string) error {
	if strings.ContainsRune(dir, '\n') {
		return fmt.Errorf("%q holds a newline", dir)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file", path)
	case !ok || int(st.Uid) != os.Geteuid():
		return fmt.Errorf("%s belongs to another user", path)
	}
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.WriteString(dir + "\n"); err != nil {
		return err
	}
	return f.Close()
}
