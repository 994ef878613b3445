package sloassert

import "github.com/tailguard/tailguard/latencytest"

// The package's tests reach these unexported parts under their former
// names.
var (
	LowerBound    = lowerBound
	UpperBound    = upperBound
	MannWhitneyU  = mannWhitneyU
	TimelineChart = timelineChart
	WriteCharts   = writeCharts
)

const EnvStepSummary = envStepSummary

// ReplayCommand is the replay command Check puts at the end of a failing
// report of r.
func ReplayCommand(t TestingT, r *latencytest.Result) string { return replayCommand(t, r) }

// JudgeOn is o's outcome on r alone, without the report around it (for
// simulations over many seeds).
func JudgeOn(o Objective, r *latencytest.Result) Outcome { return o.judgeOn(r) }

// DecodeRates is decodeRates, the rates MinDecodeRate judges.
var DecodeRates = decodeRates
