package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Within reports whether p is root or lies inside it. Both must be clean
// and absolute. The comparison is by whole components: /app does not
// contain /app_backup.
func Within(p, root string) bool {
	if root == "/" {
		return strings.HasPrefix(p, "/")
	}
	// p == root || strings.HasPrefix(p, root+"/"), without building
	// root+"/": this runs for every path against every root, thousands
	// of times a command.
	return len(p) >= len(root) && p[:len(root)] == root && (len(p) == len(root) || p[len(root)] == '/')
}

// Depth is the number of components in a clean absolute path; "/" is 0.
// Renderers mount in order of depth so that a parent never hides a
// nested mount made before it.
func Depth(p string) int {
	if p == "/" {
		return 0
	}
	return strings.Count(p, "/")
}

// isClean reports whether p is absolute, clean and free of NUL bytes (which
// no argv or path can carry).
func isClean(p string) bool {
	return filepath.IsAbs(p) && filepath.Clean(p) == p && !strings.ContainsRune(p, 0)
}

// absClean checks that p is absolute and returns it cleaned. Relative
// paths are refused rather than guessed at: Spec promises absolute paths
// and a relative one means the caller lost track of its base.
func absClean(what, p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("sandbox: %s: empty path", what)
	}
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("sandbox: %s %q: contains a NUL byte", what, p)
	}
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("sandbox: %s %q: not an absolute path", what, p)
	}
	return filepath.Clean(p), nil
}

// maxLinks bounds symlink resolution, as the kernel's ELOOP does.
const maxLinks = 40

var errLoop = errors.New("too many levels of symbolic links")

// Resolve returns the path the kernel would reach for p (absolute): component by
// component, following symlinks, so that `link/..` is the parent of the
// link's target and not the directory holding the link. The part that does
// not exist (or cannot be searched) is appended lexically: a path that
// does not exist yet is still named by where it would be created.
func Resolve(p string) (string, error) {
	return resolveDepth(p, 0, nil)
}

// ResolveLinks is Resolve that also lists the symbolic links it
// followed, each named by the resolved path of the directory holding it
// (where it can be changed), in the order met; on an error, those met
// before it.
func ResolveLinks(p string) (string, []string, error) {
	var links []string
	r, err := resolveDepth(p, 0, &links)
	return r, links, err
}

func resolveDepth(p string, links int, met *[]string) (string, error) {
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
		if processFiles(next) {
			// /proc/self, /dev/fd, /dev/stdin ... lead to the resolving
			// process's own descriptors, which say nothing about the
			// process that will open the path.
			return filepath.Join(next, filepath.Join(parts[i+1:]...)), nil
		}
		fi, err := os.Lstat(next)
		if err != nil {
			// Missing, unsearchable or not a directory: nothing further
			// can be a symlink we are able to read, so the rest is
			// lexical.
			return filepath.Join(next, filepath.Join(parts[i+1:]...)), nil
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links >= maxLinks {
			return "", fmt.Errorf("sandbox: %s: %w", p, errLoop)
		}
		if met != nil {
			*met = append(*met, next)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return filepath.Join(next, filepath.Join(parts[i+1:]...)), nil
		}
		if !filepath.IsAbs(target) {
			// Not filepath.Join: that would clean a `..` in the target
			// lexically, before the links in front of it are followed.
			target = cur + "/" + target
		}
		r, err := resolveDepth(target, links+1, met)
		if err != nil {
			return "", err
		}
		cur = r
		links++ // a chain of links counts against the same bound
	}
	return cur, nil
}

// resolver is Resolve for many paths in few directories, as Derive asks:
// it remembers the directories that resolve to themselves (they exist,
// and no component of theirs is a symlink), so that a name in one costs
// one lstat instead of one per component. What it remembers is kept for
// one Derive call only. A nil *resolver is plain Resolve.
type resolver struct {
	plain map[string]bool
}

func newResolver() *resolver { return &resolver{plain: map[string]bool{}} }

func (rs *resolver) resolve(p string) (string, error) {
	if rs == nil {
		return Resolve(p)
	}
	dir := filepath.Dir(p)
	if rs.plain[dir] && filepath.IsAbs(p) && filepath.Clean(p) == p && !processFiles(p) {
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
			// Missing (or not searchable): named lexically, as Resolve
			// does past the first component it cannot lstat.
			return p, nil
		case fi.Mode()&fs.ModeSymlink == 0:
			if fi.IsDir() {
				rs.plain[p] = true
			}
			return p, nil
		}
		// A symlink: followed the long way.
	}
	r, err := Resolve(p)
	if err == nil && r == p && filepath.IsAbs(p) && filepath.Clean(p) == p {
		// Every component resolved to itself: the ones that exist and
		// are directories are plain (not the process's own files,
		// which say nothing about the command's).
		for _, d := range []string{p, dir} {
			if Within(d, "/proc") || Within(d, "/dev") {
				continue
			}
			if fi, err := os.Lstat(d); err == nil && fi.IsDir() {
				rs.plain[d] = true
			}
		}
	}
	return r, err
}

// exists reports whether p exists (following symlinks).
func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// processFiles reports whether p names the files of "this process":
// /proc/self, /proc/thread-self, /proc/PID, /dev/fd, /dev/stdin,
// /dev/stdout, /dev/stderr.
func processFiles(p string) bool {
	switch p {
	case "/proc/self", "/proc/thread-self", "/dev/fd", "/dev/stdin", "/dev/stdout", "/dev/stderr":
		return true
	}
	if rest, ok := strings.CutPrefix(p, "/proc/"); ok && rest != "" && !strings.Contains(rest, "/") {
		return strings.Trim(rest, "0123456789") == ""
	}
	return false
}
