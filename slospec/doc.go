// Package slospec keeps a latency SLO in a YAML file and runs it under go
// test with one line:
//
//	func TestChatSLO(t *testing.T) { slospec.RunFile(t, "slo.yaml") }
//
// It is the one package that wires the others together: a spec names a
// target (a fakeprovider preset or profile, run in virtual time, or an
// endpoint from the environment speaking OpenAI chat completions, OpenAI's
// Responses API or Anthropic's Messages API), the load latencytest
// runs against it (a batch at each concurrency level, agent chains), and
// the sloassert objectives that judge the results. sloassert itself does
// not depend on the simulator.
//
// # Strictness
//
// [ParseSpec] and [LoadSpec] decode strictly: an unknown or repeated key, a
// value of the wrong kind, a percent where a fraction belongs (or the
// other way round), a quantile the planned sample cannot support, an
// unknown error class, or a spec with no objective is an error that names
// its line and key: "slospec: line 3: objectives.ttft.p99: ...". See [Spec]
// for every key.
//
// # Running
//
// [RunFile] runs one subtest per concurrency level ("c8") and one per
// objective ("c8/ttft_p99"). An objective subtest fails with its own row;
// the level prints its whole report once (distribution, counts, errors by
// class with an example, slowest trace IDs, missing disclosure boxes). A
// level its deadline cut short fails, and the levels after it do not run.
//
// # Records of other tools
//
// target: {records: GLOB, format: vllm} judges another load tool's
// per-request output (one of [records.Formats]) with the same
// objectives. [Judge] is the pure core of a records target, without a
// testing.T; [JudgeFile] loads a spec and judges records given apart from
// it (the spec then needs no target): the tailguard command's judge
// subcommand calls it. A level whose sample is too small for an
// objective's rule is [LevelReport.Undecided], and its [LevelReport.Verdict]
// inconclusive.
//
// # Objective kinds
//
// Each kind of objective ([ObjectiveKind]) is one entry of one table:
// the key that writes it, how it is parsed, the clock it needs measured,
// its sample-size rule, and the sloassert objective it builds. Adding a
// kind is that entry plus the sloassert function that judges it.
package slospec
