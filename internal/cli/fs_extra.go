package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/fsop"
	"github.com/guardrun/guardrun/rules"
)

// refuseWithoutSandbox refuses every fs operation, as every command is
// refused, when no OS sandbox works here and the config says
// os_sandbox_fallback: refuse_tools. fs runs outside the sandbox, but a
// config that refuses tools without one means all of them.
func (f *fsRun) refuseWithoutSandbox() error {
	s := f.s
	err := s.ToolsRefused()
	if err == nil {
		return nil
	}
	f.path = rules.Resolve(f.arg, s.Env.Cwd)
	f.d = &rules.Decision{Decision: rules.Block, Reason: "no OS sandbox is available (os_sandbox_fallback: refuse_tools): " + err.Error()}
	return f.refuse(approval.Outcome{By: "sandbox", Refusal: "guardrun: refused: " + oneLine(f.d.Reason)})
}

// parentsToCreate says which missing directories a write of f.path
// would create, after loading it failed with err: only when the file's
// parent is missing, and every missing directory lies inside the file's
// own read-write zone (never its root). The write's decision covers
// them: they are shown in what the person approves.
func (f *fsRun) parentsToCreate(err error) ([]string, bool) {
	if !errors.Is(err, fs.ErrNotExist) || len(f.d.Parts) == 0 {
		return nil, false
	}
	zone := f.d.Parts[0].Zone
	z, ok := f.s.Loaded.Cfg.ZoneByName(zone)
	if zone == "" || !ok || z.Mode != rules.ReadWrite {
		return nil, false
	}
	dirs, derr := fsop.MissingDirs(f.path)
	if derr != nil || len(dirs) == 0 {
		return nil, false
	}
	for _, d := range dirs {
		p := f.s.Loaded.Engine.File(rules.OpWrite, d, f.s.Env.Cwd)
		if p.Zone != zone || d == z.Root || p.Path == z.Root || p.Path != d {
			return nil, false
		}
	}
	return dirs, true
}

// mkdirDetail is the prompt's line about the directories a write creates.
func mkdirDetail(dirs []string, st approval.Style) string {
	if len(dirs) == 0 {
		return ""
	}
	quoted := make([]string, len(dirs))
	for i, d := range dirs {
		quoted[i] = approval.Sanitize(d)
	}
	what := "create " + plural(len(dirs), "directory", "directories")
	if st.Color {
		what = "\x1b[1m" + what + "\x1b[0m"
	}
	return fmt.Sprintf("%s %s\n", what, strings.Join(quoted, ", "))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
