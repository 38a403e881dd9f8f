//go:build cgo && linux

package seccomp

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"

	"github.com/guardrun/guardrun/sandbox"
)

// archs are the architectures the rules are written for: clone takes its
// flags first, ioctl numbers and errno values are the asm-generic ones,
// and calls added since Linux 5.1 share one number (rule.nr).
var archs = map[libseccomp.ScmpArch]bool{
	libseccomp.ArchAMD64:   true,
	libseccomp.ArchARM64:   true,
	libseccomp.ArchRISCV64: true,
}

// maxInsns is the kernel's BPF_MAXINSNS: a longer program is refused when
// bwrap loads it, far from here.
const maxInsns = 4096

// Build compiles the filter for p for the native architecture.
func Build(p sandbox.SeccompPolicy) (*Filter, error) {
	f, _, err := build(p, nil)
	return f, err
}

// BuildRoutes is Build with the system calls of routes sent to user
// space (SECCOMP_RET_USER_NOTIF) instead of allowed, each when one of its
// conditions holds (always, without any), the others left to the rest of
// the filter: whoever holds the listener descriptor the kernel returns
// when the program is loaded with SECCOMP_FILTER_FLAG_NEW_LISTENER
// answers them (package seccomp/notify). Without a listener, or once it
// is closed, those calls fail with ENOSYS. It returns the program and the
// system call number of each routed name on this architecture (names the
// architecture does not have, chmod on arm64, are left out). A call the
// deny rules refuse may be routed only on conditions that compare the
// same argument under the same mask as every one of those rules, with
// other values (mknodat: a regular file, a FIFO or a socket routed, a
// device refused), so that no call is both refused and served.
func BuildRoutes(p sandbox.SeccompPolicy, routes []Route) (*Filter, map[int32]string, error) {
	if len(routes) == 0 {
		return nil, nil, errors.New("seccomp: no system calls to route to user space")
	}
	return build(p, routes)
}

// lateCalls are system calls added to Linux after libseccomp 2.5 (the
// oldest this builds with), by number: since Linux 5.1 a new call has the
// same number on every architecture Build accepts.
var lateCalls = map[string]int{
	"fchmodat2":     452,
	"setxattrat":    463,
	"getxattrat":    464,
	"listxattrat":   465,
	"removexattrat": 466,
}

func build(p sandbox.SeccompPolicy, routes []Route) (*Filter, map[int32]string, error) {
	arch, err := libseccomp.GetNativeArch()
	if err != nil {
		return nil, nil, fmt.Errorf("seccomp: native architecture: %w", err)
	}
	if !archs[arch] {
		return nil, nil, fmt.Errorf("seccomp: architecture %s is not supported: the rules are written for amd64, arm64 and riscv64", arch)
	}
	sf, err := libseccomp.NewFilter(libseccomp.ActAllow)
	if err != nil {
		return nil, nil, fmt.Errorf("seccomp: %w", err)
	}
	defer sf.Release()
	// Only the native architecture is in the filter, so this also
	// catches the x32 ABI on amd64: libseccomp sends system call numbers
	// with __X32_SYSCALL_BIT to the bad-arch action.
	if err := sf.SetBadArchAction(libseccomp.ActKillProcess); err != nil {
		return nil, nil, fmt.Errorf("seccomp: the kill-process action needs Linux 4.14 and libseccomp 2.4 or later: %w", err)
	}
	// bwrap sets no_new_privs itself before loading the program; this
	// covers a filter loaded through libseccomp instead.
	if err := sf.SetNoNewPrivsBit(true); err != nil {
		return nil, nil, fmt.Errorf("seccomp: no_new_privs: %w", err)
	}
	rs := rules(p)
	for _, r := range rs {
		if err := addRule(sf, r); err != nil {
			return nil, nil, err
		}
	}
	var nrs map[int32]string
	if routes != nil {
		nrs = map[int32]string{}
		for _, r := range routes {
			if !disjoint(r, rs) {
				return nil, nil, fmt.Errorf("seccomp: %s is refused by the filter and cannot also be routed to user space", r.Name)
			}
			nr, err := syscallNr(r.Name)
			if err != nil {
				return nil, nil, err
			}
			if nr < 0 {
				continue // not on this architecture
			}
			if err := addRoute(sf, nr, r); err != nil {
				return nil, nil, err
			}
			nrs[int32(nr)] = r.Name
		}
	}
	prog, err := export(sf)
	if err != nil {
		return nil, nil, err
	}
	return &Filter{prog: prog}, nrs, nil
}

// addRoute adds r, the system call nr, routed to user space.
func addRoute(sf *libseccomp.ScmpFilter, nr libseccomp.ScmpSyscall, r Route) error {
	if len(r.Any) == 0 {
		if err := sf.AddRuleExact(nr, libseccomp.ActNotify); err != nil {
			return fmt.Errorf("seccomp: route %s to user space (it needs Linux 5.0 and libseccomp 2.5 or later): %w", r.Name, err)
		}
		return nil
	}
	for _, c := range r.Any {
		cond, err := libseccomp.MakeCondition(c.Arg, libseccomp.CompareMaskedEqual, c.Mask, c.Val)
		if err == nil {
			err = sf.AddRuleConditionalExact(nr, libseccomp.ActNotify, []libseccomp.ScmpCondition{cond})
		}
		if err != nil {
			return fmt.Errorf("seccomp: route %s to user space when argument %d & %#x is %#x: %w", r.Name, c.Arg, c.Mask, c.Val, err)
		}
	}
	return nil
}

func addRule(sf *libseccomp.ScmpFilter, r rule) error {
	nr, err := libseccomp.GetSyscallFromName(r.name)
	if err != nil {
		if r.nr == 0 {
			maj, mnr, mic := libseccomp.GetLibraryVersion()
			return fmt.Errorf("seccomp: libseccomp %d.%d.%d does not know the system call %s: install a newer libseccomp", maj, mnr, mic, r.name)
		}
		nr = libseccomp.ScmpSyscall(r.nr)
	}
	if nr < 0 {
		// A pseudo number: the call does not exist on this
		// architecture, so there is nothing to refuse.
		return nil
	}
	action := libseccomp.ActErrno.SetReturnCode(int16(r.errno))
	if len(r.any) == 0 {
		if err := sf.AddRuleExact(nr, action); err != nil {
			return fmt.Errorf("seccomp: rule for %s: %w", r.name, err)
		}
		return nil
	}
	for _, m := range r.any {
		var c libseccomp.ScmpCondition
		switch m.op {
		case opMaskedEq:
			c, err = libseccomp.MakeCondition(m.arg, libseccomp.CompareMaskedEqual, m.mask, m.val)
		case opNotEqual:
			c, err = libseccomp.MakeCondition(m.arg, libseccomp.CompareNotEqual, m.val)
		default:
			err = fmt.Errorf("unknown comparison %d", m.op)
		}
		conds := []libseccomp.ScmpCondition{c}
		for _, w := range r.with {
			if err != nil {
				break
			}
			var wc libseccomp.ScmpCondition
			wc, err = libseccomp.MakeCondition(w.arg, libseccomp.CompareMaskedEqual, w.mask, w.val)
			conds = append(conds, wc)
		}
		if err == nil {
			err = sf.AddRuleConditionalExact(nr, action, conds)
		}
		if err != nil {
			return fmt.Errorf("seccomp: rule for %s (%s): %w", r.name, r.cond, err)
		}
	}
	return nil
}

// export reads the compiled program back from libseccomp, which only
// writes it to a descriptor (ExportBPFMem needs libseccomp 2.6).
func export(sf *libseccomp.ScmpFilter) ([]byte, error) {
	f, _, err := scratchFile()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := sf.ExportBPF(f); err != nil {
		return nil, fmt.Errorf("seccomp: export: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("seccomp: export: %w", err)
	}
	prog, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("seccomp: export: %w", err)
	}
	switch n := len(prog); {
	case n == 0 || n%8 != 0:
		return nil, fmt.Errorf("seccomp: export: libseccomp wrote %d bytes, not whole instructions", n)
	case n/8 > maxInsns:
		return nil, fmt.Errorf("seccomp: export: the program has %d instructions; the kernel takes at most %d", n/8, maxInsns)
	}
	return prog, nil
}

// File returns a new descriptor holding the program, read position at the
// start, for bwrap's --seccomp. The caller closes it once bwrap has
// started. It is a sealed memfd where the kernel has them (so the program
// bwrap reads is the one built here, whoever else holds the descriptor),
// else an unlinked temporary file; it is close-on-exec until os/exec hands
// it on through ExtraFiles.
func (f *Filter) File() (*os.File, error) {
	prog, err := f.BPF()
	if err != nil {
		return nil, err
	}
	return ProgramFile(prog)
}

// ProgramFile is a program (BPF's bytes) in a file as File makes it.
func ProgramFile(prog []byte) (*os.File, error) {
	file, sealable, err := scratchFile()
	if err != nil {
		return nil, err
	}
	if err := fill(file, prog, sealable); err != nil {
		file.Close()
		return nil, err
	}
	return file, nil
}

func fill(file *os.File, prog []byte, sealable bool) error {
	if _, err := file.Write(prog); err != nil {
		return fmt.Errorf("seccomp: write program: %w", err)
	}
	if sealable {
		rc, err := file.SyscallConn()
		if err != nil {
			return fmt.Errorf("seccomp: seal program: %w", err)
		}
		var serr error
		err = rc.Control(func(fd uintptr) {
			_, serr = unix.FcntlInt(fd, unix.F_ADD_SEALS,
				unix.F_SEAL_SEAL|unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE)
		})
		if err = errors.Join(err, serr); err != nil {
			return fmt.Errorf("seccomp: seal program: %w", err)
		}
	}
	if _, err := file.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("seccomp: rewind program: %w", err)
	}
	return nil
}

// scratchFile returns an anonymous read-write file and whether it can be
// sealed. memfd_create can be missing (before Linux 3.17) or refused by a
// surrounding sandbox; an unlinked file in the temporary directory serves
// as well, without the seal.
func scratchFile() (*os.File, bool, error) {
	fd, err := unix.MemfdCreate("guardrun-seccomp", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err == nil {
		return os.NewFile(uintptr(fd), "memfd:guardrun-seccomp"), true, nil
	}
	f, terr := os.CreateTemp("", "guardrun-seccomp-*")
	if terr != nil {
		return nil, false, fmt.Errorf("seccomp: no file for the program: memfd_create: %v; temporary file: %w", err, terr)
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, false, fmt.Errorf("seccomp: unlink temporary file: %w", err)
	}
	return f, false, nil
}

var supported = sync.OnceValue(func() error {
	if _, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("seccomp: the kernel has no seccomp support (it needs CONFIG_SECCOMP and CONFIG_SECCOMP_FILTER): %w", err)
	}
	for _, p := range []sandbox.SeccompPolicy{{}, {AllowNetwork: true}, {AllowUnix: true}} {
		f, err := Build(p)
		if err != nil {
			return err
		}
		f.Release()
	}
	return nil
})

// Supported reports whether Build works here: the kernel has seccomp, the
// architecture is one the rules are written for, and libseccomp is recent
// enough. The answer is computed once per process.
func Supported() error {
	return supported()
}

// syscallNr is the number of the system call name on this architecture
// (negative where it does not exist here).
func syscallNr(name string) (libseccomp.ScmpSyscall, error) {
	nr, err := libseccomp.GetSyscallFromName(name)
	if err == nil {
		return nr, nil
	}
	late, ok := lateCalls[name]
	if !ok {
		maj, mnr, mic := libseccomp.GetLibraryVersion()
		return 0, fmt.Errorf("seccomp: libseccomp %d.%d.%d does not know the system call %s: install a newer libseccomp", maj, mnr, mic, name)
	}
	return libseccomp.ScmpSyscall(late), nil
}
