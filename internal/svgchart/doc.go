// Package svgchart writes small, deterministic SVG line and dot charts by
// hand, for test artifacts: no third-party dependency, no fonts, no
// scripts.
//
// # Axes
//
// Each axis has one unit, named in its label ("total (ms)"). An axis is
// linear (ticks at 1, 2 or 5 times a power of ten) or logarithmic (ticks at
// 1, 2 and 5 times each power of ten). Values are float64 in the axis's
// unit; the caller converts durations before plotting.
//
// # Off-scale values
//
// A NaN coordinate breaks a line. A +Inf Y value (a failed request, a
// quantile that reached one) is drawn as a triangle on the top edge of the
// plot, so it is seen and never mistaken for a finite value.
//
// # Determinism
//
// The same Chart gives the same bytes: coordinates are written with one
// decimal, numbers on axes with as many decimals as the tick step needs,
// and nothing is iterated in map order. Golden files can pin the output.
package svgchart
