// Package disclosure holds a result's disclosure: one box per item of a
// published 15-box benchmarking checklist (docs/sources.md), the warnings
// no box holds whole, and the records files a merged result was joined
// from. latencytest fills it (latencytest.Disclosure is this type),
// records fills a merged or imported result's, and sloassert prints it.
// A box that cannot be filled is marked Missing: an empty box means
// "trust me".
package disclosure
