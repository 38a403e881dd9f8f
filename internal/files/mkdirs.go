package files

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/fsop"
	"github.com/guardrun/guardrun/rules"
)

// parentsToCreate says which missing directories a write of o.path
// would create, after loading it failed with err: only when the file's
// parent is missing, and every missing directory lies inside the file's
// own read-write zone (never its root). The write's decision covers
// them: they are shown in what the person approves.
func (o *op) parentsToCreate(err error) ([]string, bool) {
	if !errors.Is(err, fs.ErrNotExist) || len(o.d.Parts) == 0 {
		return nil, false
	}
	s := o.f.S
	zone := o.d.Parts[0].Zone
	z, ok := s.Loaded.Cfg.ZoneByName(zone)
	if zone == "" || !ok || z.Mode != rules.ReadWrite {
		return nil, false
	}
	dirs, derr := fsop.MissingDirs(o.path)
	if derr != nil || len(dirs) == 0 {
		return nil, false
	}
	for _, d := range dirs {
		p := s.Loaded.Engine.File(rules.OpWrite, d, s.Env.Cwd)
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
	what := "create " + approval.Plural(len(dirs), "directory", "directories")
	if st.Color {
		what = "\x1b[1m" + what + "\x1b[0m"
	}
	return fmt.Sprintf("%s %s\n", what, strings.Join(quoted, ", "))
}
