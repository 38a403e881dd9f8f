package bwrap

import "sync/atomic"

var filterCacheDir atomic.Pointer[string]

// SetFilterCache keeps compiled seccomp programs in dir between processes
// (see seccomp.BuildCached); dir must be outside every zone, such as
// guardrun's state directory, which the sandbox hides. Empty turns the
// cache off.
func SetFilterCache(dir string) { filterCacheDir.Store(&dir) }

// FilterCache is the directory SetFilterCache set ("" for none), for the
// other backends' filters.
func FilterCache() string { return filterCache() }

func filterCache() string {
	if p := filterCacheDir.Load(); p != nil {
		return *p
	}
	return ""
}
