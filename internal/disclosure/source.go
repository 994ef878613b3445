package disclosure

import (
	"encoding/json"
	"math"
	"time"
)

// Source is one records file that records.Merge joined, as the merged
// disclosure keeps it (Disclosure.Sources).
type Source struct {
	// Path is the records file (records.jsonl as Measure writes it).
	Path string `json:"path"`
	// Summary is the summary.json read beside it; "" when there was none
	// (then CPU/wall, location and the other boxes are not known).
	Summary string `json:"summary,omitempty"`
	// Test is the test that measured, from the summary.
	Test string `json:"test,omitempty"`
	// Counts are the source's own: Planned from its summary (the records
	// it holds when it has none), the rest from its records.
	Counts Counts `json:"counts"`
	// Start and End bound its records: the first send and the last end
	// (Record.Start + Total), wall clock.
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// CPUPerWall is its client's CPU seconds per wall second, from the
	// summary; NaN (null in JSON) when unknown.
	CPUPerWall float64 `json:"cpu_per_wall"`
	// Location is where its client ran (disclosure box 14), "" when not
	// said.
	Location string `json:"location,omitempty"`
	// Partial says why its run stopped early ("" when it did not).
	Partial string `json:"partial,omitempty"`
	// Shard is the part of a split run the source measured ("1/4"), from
	// its summary or its end line; "" for a whole run or when not said.
	Shard string `json:"shard,omitempty"`
	// Incomplete says what the source lacks ("" when it is whole, as far
	// as its end line and summary tell): a file cut short, emptied, or
	// with fewer records than planned. It makes the merge Partial.
	Incomplete string `json:"incomplete,omitempty"`
}

// MarshalJSON writes a NaN CPU/wall as null.
func (s Source) MarshalJSON() ([]byte, error) {
	type plain Source
	return json.Marshal(struct {
		plain
		CPUPerWall *float64 `json:"cpu_per_wall"`
	}{plain(s), finite(s.CPUPerWall)})
}

// UnmarshalJSON reads a null CPU/wall as NaN.
func (s *Source) UnmarshalJSON(b []byte) error {
	type plain Source
	var v struct {
		plain
		CPUPerWall *float64 `json:"cpu_per_wall"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = Source(v.plain)
	s.CPUPerWall = math.NaN()
	if v.CPUPerWall != nil {
		s.CPUPerWall = *v.CPUPerWall
	}
	return nil
}

// Counts accounts for every request: Sent = Kept + Discarded + Failed +
// Cancelled.
type Counts struct {
	// Planned is how many requests the run meant to send.
	Planned int `json:"planned"`
	// Sent is how many were sent (fewer than Planned when the deadline
	// stopped the run).
	Sent int `json:"sent"`
	// Kept is measured requests that succeeded.
	Kept int `json:"kept"`
	// Discarded is warm-up requests (whatever their outcome).
	Discarded int `json:"discarded"`
	// Failed is measured requests that failed.
	Failed int `json:"failed"`
	// Cancelled is measured requests the client cancelled on purpose
	// (see latencytest.Cancel): neither kept nor failed, so Sent = Kept +
	// Discarded + Failed + Cancelled.
	Cancelled int `json:"cancelled,omitempty"`
}

// finite is f, or nil when JSON cannot hold it (NaN, ±Inf).
func finite(f float64) *float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}
