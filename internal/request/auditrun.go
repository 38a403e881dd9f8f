package request

import (
	"fmt"
	"os"
	"time"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/rules"
)

// runID names one run in the audit log; the started record and the end
// record of a command share it.
func runID(pid int, start time.Time) string {
	if pid == 0 {
		pid = os.Getpid()
	}
	return fmt.Sprintf("%d-%d", pid, start.UnixNano())
}

// auditStart writes the record of a command about to run: the decision,
// who made it, the sandbox. Written before the command starts, it stays
// in the log if guardrun is killed while the command runs; the record of
// the end (audit) follows with the status and duration.
func (s *Session) auditStart(j *Job, cwd string, rec approval.Record, start time.Time, d *rules.Decision, io IO) {
	rec.Outcome = approval.OutcomeStarted
	rec.Zones = sandboxSummary(s.Loaded, d)
	s.audit(j, cwd, rec, start, io)
}
