// Package layers holds guardrun's import fence: layers_test.go reads the
// module's import graph with go list and fails on an import that points
// up a layer, on one a package's table entry forbids, and on a package
// the table does not place.
//
// It holds no code: nothing imports it.
package layers
