package records

import (
	"fmt"
	"io"

	"github.com/tailguard/tailguard/latencytest"
)

// Tailguard is this module's own records (JSONL, as latencytest's
// Measure and WriteRecords write them).
const Tailguard = "tailguard"

var tailguardFormat = Format{
	Name:    Tailguard,
	Tool:    "tailguard",
	Metrics: []string{"ttft", "first_answer", "itl", "max_gap", "total", "tokens"},
	Keys:    "id+ttft_ns+total_ns",
	Detect:  func(s Sniff) bool { return s.Lines && s.Has("id", "ttft_ns", "total_ns") },
	Decode: func(r io.Reader, s *Sink) error {
		recs, err := latencytest.ReadRecords(r)
		if err != nil {
			return err
		}
		for i := range recs {
			if err := s.Add(&recs[i], fmt.Sprintf("line %d", i+1)); err != nil {
				return err
			}
		}
		return nil
	},
	Levels:    MergeLevels,
	ZeroTimes: true,
	Timed: "this module's own records, read back from JSONL without the summary beside them " +
		"(what the run disclosed is not known; Merge reads both)",
	Warmup: "warm-up requests as the records mark them",
}
