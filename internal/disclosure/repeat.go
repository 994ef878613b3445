package disclosure

import (
	"encoding/json"
	"math"
	"time"
)

// RepeatGap is the between-run gap of one quantile: the noise floor. A
// change smaller than Gap is not a finding.
type RepeatGap struct {
	Metric string          `json:"metric"` // "ttft" or "total"
	Q      float64         `json:"q"`
	Runs   []time.Duration `json:"runs_ns"`
	// Gap is (max-min)/min over the runs, a fraction.
	Gap float64 `json:"gap"`
}

// MarshalJSON writes a non-finite Gap and a Failed run quantile as null.
func (g RepeatGap) MarshalJSON() ([]byte, error) {
	type plain RepeatGap
	return json.Marshal(struct {
		plain
		Runs []*int64 `json:"runs_ns"`
		Gap  *float64 `json:"gap"`
	}{plain(g), durations(g.Runs), finite(g.Gap)})
}

// durations renders latencies for JSON: nanoseconds, Failed as null.
func durations(ds []time.Duration) []*int64 {
	out := make([]*int64, len(ds))
	for i, d := range ds {
		out[i] = nanos(d)
	}
	return out
}

// nanos is d in nanoseconds, or nil for Failed (which JSON would
// otherwise show as 9223372036854775807).
func nanos(d time.Duration) *int64 {
	if d == time.Duration(math.MaxInt64) { // sample.Failed
		return nil
	}
	n := int64(d)
	return &n
}
