package rules

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Resolve makes p absolute against cwd and resolves it the way the kernel
// would: component by component, following symlinks (so `link/..` means the
// parent of the link's target, not the directory holding the link). The
// part of the path that does not exist yet is appended lexically.
func Resolve(p, cwd string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	out, err := resolve(p, 0)
	if err != nil {
		// Too many links: keep the lexical path; it still names the
		// place the person sees, and the sandbox decides the rest.
		return filepath.Clean(p)
	}
	return out
}

var errLoop = errors.New("too many levels of symbolic links")

func resolve(p string, depth int) (string, error) {
	if depth > 40 {
		return "", errLoop
	}
	parts := strings.Split(p, "/")
	cur := "/"
	for i, c := range parts {
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) || isNotDir(err) {
				rest := strings.Join(parts[i:], "/")
				return filepath.Join(cur, rest), nil
			}
			return filepath.Join(cur, strings.Join(parts[i:], "/")), nil
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		target, err := os.Readlink(next)
		if err != nil {
			return filepath.Join(cur, strings.Join(parts[i:], "/")), nil
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(cur, target)
		}
		resolved, err := resolve(target, depth+1)
		if err != nil {
			return "", err
		}
		cur = resolved
	}
	return cur, nil
}

func isNotDir(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "not a directory")
}

// Within reports whether p is root or inside it. Both must be clean and
// absolute; /app does not contain /app_backup.
func Within(p, root string) bool {
	if root == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == root || strings.HasPrefix(p, root+"/")
}
