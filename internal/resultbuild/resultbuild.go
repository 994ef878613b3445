// Package resultbuild is the seam through which the module's importers
// (package records) build a latencytest.Result from records measured
// elsewhere, without latencytest exporting its builder: latencytest sets
// New when it is initialised, and an importer asserts the methods it
// uses.
package resultbuild

// New returns a new, empty builder of a latencytest.Result; latencytest
// sets it in its init, so it is set in any program that imports
// latencytest. The builder has the methods Add(*latencytest.Record),
// Len() int, Box(n int, answer string, missing bool) and
// Result(partial string) *latencytest.Result.
var New func() any
