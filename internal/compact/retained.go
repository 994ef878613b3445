package compact

// RetainedBytes is about how much memory a *latencytest.Result's records
// hold: for compact records their Arena, Sketch and whole records; for
// full records the Record structs, their gaps, strings and answers.
// latencytest sets it when it is loaded (this package cannot name its
// Result); tests and benchmarks outside latencytest read the figure
// through it. It panics for anything but a *latencytest.Result.
var RetainedBytes func(result any) int
