//go:build cgo && linux

package seccomp

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"

	"github.com/guardrun/guardrun/sandbox"
)

// BuildCached is Build, with the compiled program kept in dir between
// processes: guardrun starts once per command, and compiling costs more
// than reading. The file is named by a hash of everything the program
// depends on (the rules for p, the architecture, libseccomp's version),
// so a changed rule or library is a new file, never a stale one. It is
// written 0600 in a 0700 directory, and read back only when it is a
// regular file owned by this user, writable by no one else, of whole
// instructions: dir must be outside every zone (guardrun's state
// directory, which the sandbox hides). An empty dir, or any trouble with
// the cache, builds as Build does.
func BuildCached(p sandbox.SeccompPolicy, dir string) (*Filter, error) {
	if dir == "" {
		return Build(p)
	}
	path := filepath.Join(dir, "seccomp-"+cacheKey(p)+".bpf")
	if prog, ok := readCached(path); ok {
		return &Filter{prog: prog}, nil
	}
	f, err := Build(p)
	if err != nil {
		return nil, err
	}
	_ = writeCached(dir, path, f.prog) // best effort: a miss costs a build
	return f, nil
}

// BuildRoutesCached is BuildRoutes with BuildCached's cache: the routes
// are part of the file's name; their numbers are looked up again on a
// hit (cheap, and never read from the file).
func BuildRoutesCached(p sandbox.SeccompPolicy, routes []Route, dir string) (*Filter, map[int32]string, error) {
	if dir == "" {
		return BuildRoutes(p, routes)
	}
	path := filepath.Join(dir, "seccomp-"+cacheKey(p, routes...)+".bpf")
	if prog, ok := readCached(path); ok {
		nrs := map[int32]string{}
		for _, r := range routes {
			nr, err := syscallNr(r.Name)
			if err != nil {
				return nil, nil, err
			}
			if nr >= 0 {
				nrs[int32(nr)] = r.Name
			}
		}
		return &Filter{prog: prog}, nrs, nil
	}
	f, nrs, err := BuildRoutes(p, routes)
	if err != nil {
		return nil, nil, err
	}
	_ = writeCached(dir, path, f.prog) // best effort: a miss costs a build
	return f, nrs, nil
}

func cacheKey(p sandbox.SeccompPolicy, routes ...Route) string {
	arch, _ := libseccomp.GetNativeArch()
	maj, mnr, mic := libseccomp.GetLibraryVersion()
	h := sha256.New()
	fmt.Fprintf(h, "guardrun seccomp v2\narch %v\nlibseccomp %d.%d.%d\nmax %d\n", arch, maj, mnr, mic, maxInsns)
	h.Write(appendRules(nil, rules(p)))
	if len(routes) > 0 {
		names := make([]string, len(routes))
		conds := false
		for i, r := range routes {
			names[i] = r.Name
			conds = conds || len(r.Any) > 0
		}
		// Unconditional routes keep the key they had as names alone.
		fmt.Fprintf(h, "notify %q\n", names)
		if conds {
			for _, r := range routes {
				fmt.Fprintf(h, "route %q", r.Name)
				for _, c := range r.Any {
					fmt.Fprintf(h, " %d:%x:%x", c.Arg, c.Mask, c.Val)
				}
				h.Write([]byte{'\n'})
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// appendRules appends every field of rs to b, each string quoted and each
// list counted, so that no two rule lists give the same bytes. It is what
// fmt's %#v said of them, without the reflection (a fifth of the key's
// cost was formatting); TestAppendRulesCoversEveryField fails when a field
// is added to rule or match and not here.
func appendRules(b []byte, rs []rule) []byte {
	ms := func(b []byte, l []match) []byte {
		b = strconv.AppendInt(b, int64(len(l)), 10)
		for _, m := range l {
			b = append(b, " {"...)
			b = strconv.AppendUint(b, uint64(m.arg), 10)
			b = append(b, ' ')
			b = strconv.AppendInt(b, int64(m.op), 10)
			b = append(b, ' ')
			b = strconv.AppendUint(b, m.mask, 16)
			b = append(b, ' ')
			b = strconv.AppendUint(b, m.val, 16)
			b = append(b, '}')
		}
		return b
	}
	for _, r := range rs {
		b = append(b, "rule "...)
		b = strconv.AppendQuote(b, r.name)
		b = append(b, ' ')
		b = strconv.AppendUint(b, uint64(r.errno), 10)
		b = append(b, ' ')
		b = strconv.AppendQuote(b, r.cond)
		b = append(b, " any "...)
		b = ms(b, r.any)
		b = append(b, " with "...)
		b = ms(b, r.with)
		b = append(b, " nr "...)
		b = strconv.AppendInt(b, int64(r.nr), 10)
		b = append(b, '\n')
	}
	return b
}

func readCached(path string) ([]byte, bool) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil ||
		st.Mode&unix.S_IFMT != unix.S_IFREG || int(st.Uid) != os.Getuid() || st.Mode&0o022 != 0 ||
		st.Size <= 0 || st.Size%8 != 0 || st.Size/8 > maxInsns {
		return nil, false
	}
	prog, err := io.ReadAll(io.LimitReader(f, maxInsns*8+1))
	if err != nil || int64(len(prog)) != st.Size {
		return nil, false
	}
	return prog, true
}

func writeCached(dir, path string, prog []byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".seccomp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(prog); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
