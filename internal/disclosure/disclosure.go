package disclosure

import (
	"fmt"
	"slices"
	"strings"
)

// Disclosure says how a result was measured, one box per item of a
// published 15-box benchmarking checklist (docs/sources.md), filled
// automatically. A box that cannot be
// filled is marked Missing: an empty box means "trust me".
type Disclosure struct {
	Boxes []Box `json:"boxes"`
	// Warnings are problems with how the result was put together that no
	// box holds whole, one sentence each: records.Merge warns when the
	// sources' run windows do not overlap. Nil for a single run.
	Warnings []string `json:"warnings,omitempty"`
	// Sources are the records files a merged result was joined from
	// (records.Merge), each with its counts, run window, client CPU/wall
	// and location. Nil for a single run.
	Sources []Source `json:"sources,omitempty"`
	// Format names the format of records another tool measured, as
	// package records imported them ("vllm"); "" for latencytest's own.
	Format string `json:"format,omitempty"`
	// Records is the raw records file written for the result (box 3 says
	// where, and whether it outlives the test); "" when none was written.
	Records string `json:"records,omitempty"`
}

// Box is one checklist item.
type Box struct {
	N        int    `json:"n"`
	Question string `json:"question"`
	Answer   string `json:"answer"`
	Missing  bool   `json:"missing,omitempty"`
}

// Measurement is box 1 as every runner fills it (and a merge extends):
// how the clocks were read.
const Measurement = "on the client, monotonic clock: TTFT = first token of any kind (reasoning included), " +
	"first answer = first non-empty content, total = end of stream; failed requests count as infinitely slow"

// questions are the checklist's, by box number.
var questions = [16]string{
	1:  "what was timed, and where",
	2:  "requests sent, kept, discarded",
	3:  "raw records",
	4:  "slow first calls dropped",
	5:  "cache",
	6:  "cold first request",
	7:  "concurrency",
	8:  "load levels",
	9:  "run window",
	10: "prompt mix and seed",
	11: "temperature and token caps",
	12: "model ID",
	13: "client CPU/wall",
	14: "client location",
	15: "runs kept",
}

// Box returns box n (1-15).
func (d Disclosure) Box(n int) Box {
	for _, b := range d.Boxes {
		if b.N == n {
			return b
		}
	}
	return Box{N: n, Question: questions[n], Answer: "not recorded", Missing: true}
}

// Missing returns the boxes left empty.
func (d Disclosure) Missing() []Box {
	var out []Box
	for _, b := range d.Boxes {
		if b.Missing {
			out = append(out, b)
		}
	}
	return out
}

// String renders one line per box (empty boxes say MISSING), then one
// line per warning.
func (d Disclosure) String() string {
	var sb strings.Builder
	for _, b := range d.Boxes {
		mark := ""
		if b.Missing {
			mark = "MISSING: "
		}
		fmt.Fprintf(&sb, "%2d. %s: %s%s\n", b.N, b.Question, mark, b.Answer)
	}
	for _, w := range d.Warnings {
		fmt.Fprintf(&sb, "WARNING: %s\n", w)
	}
	return sb.String()
}

// Set fills box n (1-15) with answer; missing marks it empty.
func (d *Disclosure) Set(n int, answer string, missing bool) {
	b := Box{N: n, Question: questions[n], Answer: answer, Missing: missing}
	for i := range d.Boxes {
		if d.Boxes[i].N == n {
			d.Boxes[i] = b
			return
		}
	}
	d.Boxes = append(d.Boxes, b)
	slices.SortFunc(d.Boxes, func(a, b Box) int { return a.N - b.N })
}
