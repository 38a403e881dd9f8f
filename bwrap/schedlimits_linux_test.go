package bwrap

import (
	"testing"

	"golang.org/x/sys/unix"
)

func TestNiceLimit(t *testing.T) {
	inf := uint64(unix.RLIM_INFINITY)
	for _, tc := range []struct {
		name  string
		prio  int // 20 - nice
		lim   unix.Rlimit
		want  unix.Rlimit
		lower bool
	}{
		{"the default keeps", 20, unix.Rlimit{Cur: 0, Max: 0}, unix.Rlimit{Cur: 0, Max: 0}, false},
		{"at the ceiling keeps", 20, unix.Rlimit{Cur: 20, Max: 20}, unix.Rlimit{Cur: 20, Max: 20}, false},
		{"above it lowers", 20, unix.Rlimit{Cur: 40, Max: 40}, unix.Rlimit{Cur: 20, Max: 20}, true},
		{"unlimited lowers", 15, unix.Rlimit{Cur: inf, Max: inf}, unix.Rlimit{Cur: 15, Max: 15}, true},
		{"a hard limit above lowers it to the soft", 20, unix.Rlimit{Cur: 10, Max: 40}, unix.Rlimit{Cur: 10, Max: 10}, true},
		{"nice 19 allows nothing lower", 1, unix.Rlimit{Cur: 30, Max: 40}, unix.Rlimit{Cur: 1, Max: 1}, true},
	} {
		got, lower := niceLimit(tc.prio, tc.lim)
		if got != tc.want || lower != tc.lower {
			t.Errorf("%s: niceLimit(%d, %+v) = %+v, %v; want %+v, %v", tc.name, tc.prio, tc.lim, got, lower, tc.want, tc.lower)
		}
	}
}
