//go:build !amd64

package main

// Only amd64 has other ABIs' entry points open to a 64-bit process here.
var otherABIs []string

func watchABIChild(abi, out string) error { return setup("no other ABI on this architecture") }
