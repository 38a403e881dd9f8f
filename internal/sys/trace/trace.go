// Package trace times the phases of one guardrun run. With
// GUARDRUN_TRACE=1 in the environment, each phase's name, start (since
// main began) and duration are printed on stderr when the run ends; without
// it every call is a few nanoseconds and prints nothing.
//
//	guardrun: trace: config          +0.21ms   1.83ms
//
// Package initialisation, before main, is not a phase: measure it with
// GODEBUG=inittrace=1. The last lines are the CPU time of the whole
// process (every thread, from its start) and of the children it waited
// for, and the memory it allocated.
package trace

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"time"
)

var (
	enabled = os.Getenv("GUARDRUN_TRACE") == "1"
	mu      sync.Mutex
	origin  = time.Now()
	phases  []phase
)

type phase struct {
	name       string
	start, dur time.Duration
}

// Begin marks where main started: phases are timed from here.
func Begin() {
	if enabled {
		origin = time.Now()
	}
}

// Phase starts the phase name and returns the function that ends it.
func Phase(name string) func() {
	if !enabled {
		return func() {}
	}
	t0 := time.Now()
	return func() {
		end := time.Now()
		mu.Lock()
		phases = append(phases, phase{name, t0.Sub(origin), end.Sub(t0)})
		mu.Unlock()
	}
}

// Print writes the phases recorded so far, and the time since Begin, to w;
// nothing unless tracing is enabled.
func Print(w io.Writer) {
	if !enabled {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range phases {
		fmt.Fprintf(w, "guardrun: trace: %-16s +%7.2fms %7.2fms\n", p.name, ms(p.start), ms(p.dur))
	}
	fmt.Fprintf(w, "guardrun: trace: %-16s  %7s   %7.2fms\n", "total (main)", "", ms(time.Since(origin)))
	if self, children, ok := cpu(); ok {
		// All of guardrun's threads since the process began (so with
		// what ran before main), and the sandbox it waited for.
		fmt.Fprintf(w, "guardrun: trace: %-16s  %7s   %7.2fms (children waited for: %.2fms)\n", "cpu (process)", "", ms(self), ms(children))
	}
	// Every allocation of a short run touches fresh pages (no collection
	// runs), so what is allocated is paid in page faults.
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	fmt.Fprintf(w, "guardrun: trace: %-16s  %7s   %7dKB in %d objects (heap %dKB, %d collections)\n", "allocated", "", m.TotalAlloc>>10, m.Mallocs, m.HeapSys>>10, m.NumGC)
	phases = nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
