package request

import (
	"context"
	"fmt"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/rules"
)

// askJob is Ask for a job, asking j.Preapproved first when the job
// would prompt a person: an approval given in an agent's own dialog
// stands for the person's answer here.
func (s *Session) askJob(ctx context.Context, j *Job, req *approval.Request, io IO) (approval.Outcome, error) {
	if j.Preapproved != nil && req.Decision.Decision == rules.Ask && s.Loaded.Cfg.Mode == rules.ModeInteractive {
		ok, warning := j.Preapproved(req)
		if warning != "" {
			fmt.Fprintln(io.Stderr, warning)
		}
		if ok {
			return approval.Outcome{Run: true, By: "person"}, nil
		}
	}
	return s.Ask(ctx, req, io, nil)
}
