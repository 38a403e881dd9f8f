//go:build !unix

package cli

func ignoreFileSizeSignal() {}
