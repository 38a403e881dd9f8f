// Command buildload is the workload of runner's build benchmarks: a
// build in miniature. It makes the directory OUT, then for each of UNITS
// units reads PER files of the directory SRC (cycling through them, as
// compilers read headers) and writes one object file in OUT, then reads
// every object back (the link) and removes them and OUT, so that the
// next run starts as this one did. It prints the number of files it
// opened.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
)

func main() {
	if len(os.Args) != 5 {
		fmt.Fprintln(os.Stderr, "usage: buildload SRC OUT UNITS PER")
		os.Exit(2)
	}
	src, out := os.Args[1], os.Args[2]
	units, err1 := strconv.Atoi(os.Args[3])
	per, err2 := strconv.Atoi(os.Args[4])
	if err1 != nil || err2 != nil {
		fmt.Fprintln(os.Stderr, "buildload: UNITS and PER are numbers")
		os.Exit(2)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		fail(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, filepath.Join(src, e.Name()))
	}
	sort.Strings(names)
	if len(names) == 0 {
		fail(fmt.Errorf("%s is empty", src))
	}
	if err := os.Mkdir(out, 0o755); err != nil {
		fail(err)
	}
	opened := 0
	buf := make([]byte, 4096)
	next := 0
	for u := range units {
		sum := 0
		for range per {
			f, err := os.Open(names[next%len(names)])
			next++
			if err != nil {
				fail(err)
			}
			n, _ := f.Read(buf)
			sum += n
			f.Close()
			opened++
		}
		obj := filepath.Join(out, "u"+strconv.Itoa(u)+".o")
		if err := os.WriteFile(obj, []byte(strconv.Itoa(sum)), 0o644); err != nil {
			fail(err)
		}
		opened++
	}
	for u := range units {
		obj := filepath.Join(out, "u"+strconv.Itoa(u)+".o")
		if _, err := os.ReadFile(obj); err != nil {
			fail(err)
		}
		opened++
		if err := os.Remove(obj); err != nil {
			fail(err)
		}
	}
	if err := os.Remove(out); err != nil {
		fail(err)
	}
	fmt.Println(opened)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "buildload:", err)
	os.Exit(1)
}
