// Package agent measures agents whose tasks are graphs, not chains: a
// [Graph] of steps (model calls to any latencytest.Provider, tool steps,
// sub-agents), each run after the steps it names in After, each
// optionally fanned out to parallel copies. A [Runner] runs tasks
// closed-loop at a concurrency or open-loop at a rate, and records every
// copy of every step with its task, stage and branch ([StepRun]).
//
// # Timing
//
// A task's total is measured around the whole task, end to end, on the
// monotonic clock; each copy's start and end are offsets from the task's
// start. A step is done when all its copies are, or the first
// FanOut.First: the rest are abandoned (canceled, marked, never a
// failure). Inside a synctest bubble against fakeprovider's in-memory
// fake every time is exact.
//
// # Critical path
//
// A task's critical path ([TaskRun.CriticalPath]) is the chain of model
// and tool copies that set its total: back from the step done last, to
// the step it waited for that was done last, through the copy that
// finished its step (the slowest, or the First-th), into a sub-agent
// copy's own critical path.
//
// # Budgets and verdicts
//
// [Target] is a task target (the task's q-quantile within a budget).
// [Target.Budgets] works per-step budgets back along the graph's
// critical path: a fan-out of n copies of which the slowest must meet
// its budget needs each copy within it with probability p^(1/n), and
// tool time is set aside first. [Target.Objective] judges measured task
// totals, with a failure report naming the slowest tasks' critical
// paths; [Evaluate] and [Check] apply objectives to a [Result], live or
// read back with [ReadTasks] from the file [WriteTasks] wrote.
//
// # Prediction
//
// [Predict] draws each model copy from the run's own measured calls
// (and each tool copy from its distribution) independently through the
// graph, a seeded bootstrap: the totals it gives are a prediction, never
// a measurement, set beside the measured ones with a warning when the
// measured tail is heavier (the calls of a task are correlated).
//
// # Conversations
//
// [Conversation] runs multi-turn sessions; [ConversationResult.Sessions]
// holds each as a chain of turns, its think times its ToolTime. A turn
// the client cancels on purpose leaves its session going but cancelled
// (Err "cancelled"): Failed in session totals, in neither part of the
// session error rate, as a cancelled chain and a cancelled request are.
//
// # Determinism
//
// Trace IDs are the task's ("task03"), then the step path, each
// fanned-out step with its branch ("task03-research-b01-search-b02").
// Fan-out counts, tool waits and arrivals are drawn from Runner.Seed and
// the task and copy, so a run draws the same whatever order its tasks
// run in.
package agent
