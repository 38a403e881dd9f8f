//go:build linux

package notify

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// Status is what /proc/PID/status says of a process that the file and
// exec handlers need.
type Status struct {
	Tgid, PPid int
	// Threads is the number of threads in the thread group.
	Threads int
	// Umask is the process's file mode creation mask.
	Umask uint32
	// NSpid is the process's id in each pid namespace it is in, the
	// outermost (guardrun's) first: the last is its id as it sees it.
	NSpid []int
}

// Status reads the caller's /proc/PID/status, checking afterwards that
// the call is still waiting (so that it describes the caller).
func (r *Request) Status() (Status, error) {
	st, err := readStatus(r.Pid)
	if verr := r.Valid(); verr != nil {
		return Status{}, verr
	}
	return st, err
}

// readStatus parses /proc/PID/status.
func readStatus(pid int) (Status, error) {
	b, err := readSmall("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return Status{}, syscall.ESRCH
		}
		return Status{}, err
	}
	st := Status{Umask: 0o022}
	seen := 0
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		key, val, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		val = bytes.TrimSpace(val)
		switch string(key) {
		case "Umask":
			if v, err := strconv.ParseUint(string(val), 8, 32); err == nil {
				st.Umask = uint32(v)
			}
		case "Tgid":
			st.Tgid, _ = strconv.Atoi(string(val))
			seen++
		case "PPid":
			st.PPid, _ = strconv.Atoi(string(val))
			seen++
		case "Threads":
			st.Threads, _ = strconv.Atoi(string(val))
			seen++
		case "NSpid":
			for _, f := range bytes.Fields(val) {
				n, err := strconv.Atoi(string(f))
				if err != nil {
					return Status{}, fmt.Errorf("notify: NSpid %q in /proc/%d/status", val, pid)
				}
				st.NSpid = append(st.NSpid, n)
			}
		}
	}
	if seen < 3 {
		return Status{}, fmt.Errorf("notify: /proc/%d/status lacks Tgid, PPid or Threads", pid)
	}
	if len(st.NSpid) == 0 {
		st.NSpid = []int{pid}
	}
	return st, nil
}

// readSmall reads a file of procfs, which reports no size, in one or a
// few reads.
func readSmall(path string) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	buf := make([]byte, 0, 2048)
	for {
		if len(buf) == cap(buf) {
			if cap(buf) >= 1<<24 {
				return nil, fmt.Errorf("notify: %s is larger than 16 MiB", path)
			}
			buf = append(buf, make([]byte, cap(buf))...)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}
