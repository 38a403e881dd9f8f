//go:build !unix

package netproxy

import "time"

// processCPU is not measured here: the CPU ratio is left out.
func processCPU() time.Duration { return 0 }
