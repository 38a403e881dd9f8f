package rules

import (
	"path/filepath"

	"github.com/guardrun/guardrun/sandbox"
)

// Resolve makes p absolute against cwd and resolves it the way the kernel
// would (sandbox.Resolve): component by component, following symlinks, so
// `link/..` is the parent of the link's target. The part of the path that
// does not exist yet is appended lexically.
func Resolve(p, cwd string) string {
	if !filepath.IsAbs(p) {
		// Not filepath.Join, which would clean `link/..` lexically to
		// nothing before the link is followed.
		p = cwd + "/" + p
	}
	out, err := sandbox.Resolve(p)
	if err != nil {
		// Too many links: keep the lexical path; it still names the
		// place the person sees, and the sandbox decides the rest.
		return filepath.Clean(p)
	}
	return out
}

// Within reports whether p is root or inside it; /app does not contain
// /app_backup.
var Within = sandbox.Within
