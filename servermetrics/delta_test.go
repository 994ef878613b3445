package servermetrics_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tailguard/tailguard/servermetrics"
)

func snap(at time.Duration, cum []float64, count, sum float64) servermetrics.Snapshot {
	return servermetrics.Snapshot{
		At:     time.Unix(0, 0).Add(at),
		Server: servermetrics.VLLM,
		Histograms: map[servermetrics.Stage]servermetrics.Histogram{
			servermetrics.Queue: {Metric: "vllm:request_queue_time_seconds", Bounds: []float64{0.3, 0.5, 1, 2.5}, Cumulative: cum, Count: count, Sum: sum},
		},
		Gauges: map[servermetrics.Gauge]float64{servermetrics.Waiting: count},
	}
}

// TestDeltaCounts: the interval's counts are after less before, per
// bucket, the +Inf bucket last.
func TestDeltaCounts(t *testing.T) {
	before := snap(0, []float64{10, 12, 15, 15}, 16, 8)
	after := snap(time.Minute, []float64{50, 60, 90, 99}, 100, 80)
	iv, err := servermetrics.Delta(before, after)
	require.NoError(t, err)
	d, ok := iv.Stage(servermetrics.Queue)
	require.True(t, ok)
	// cumulative deltas 40, 48, 75, 84, 84 of total 84 -> per bucket:
	assert.Equal(t, []int{40, 8, 27, 9, 0}, d.Counts)
	assert.Equal(t, 84, d.N)
	assert.Equal(t, 72*time.Second, d.Sum)
	assert.Equal(t, time.Minute, iv.End.Sub(iv.Start))
	assert.Len(t, iv.Points, 2)
}

// TestQuantileFromBuckets: the rank q·N picks the bucket; the estimate
// interpolates inside it; beyond the last bound it is only "above".
func TestQuantileFromBuckets(t *testing.T) {
	d := servermetrics.Distribution{Bounds: []float64{0.3, 0.5, 1, 2.5}, Counts: []int{40, 8, 27, 9, 16}, N: 100}
	for _, tc := range []struct {
		name   string
		q      float64
		lo, hi time.Duration
		value  time.Duration
		above  bool
	}{
		// rank 20 of the first bucket's 40: 0 + 0.3·20/40.
		{"p20 in the first bucket", 0.2, 0, 300 * time.Millisecond, 150 * time.Millisecond, false},
		// rank 40 is the first bucket's last observation: its bound.
		{"p40 at a bound", 0.4, 0, 300 * time.Millisecond, 300 * time.Millisecond, false},
		// rank 50: 48 below, 2 of 27 into (0.5, 1]: 0.5 + 0.5·2/27.
		{"p50", 0.5, 500 * time.Millisecond, time.Second, 537037037, false},
		// rank 84: exactly the fourth bucket's last, 2.5s.
		{"p84", 0.84, time.Second, 2500 * time.Millisecond, 2500 * time.Millisecond, false},
		// rank 99 lies in the 16 above 2.5s.
		{"p99 above the last bound", 0.99, 2500 * time.Millisecond, 0, 2500 * time.Millisecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := d.Quantile(tc.q)
			require.True(t, e.OK)
			assert.Equal(t, tc.lo, e.Lo)
			assert.Equal(t, tc.hi, e.Hi)
			assert.Equal(t, tc.value, e.Value)
			assert.Equal(t, tc.above, e.Above)
		})
	}
	assert.Equal(t, "537.0ms (bucket 500ms-1s)", d.Quantile(0.5).String())
	assert.Equal(t, "> 2.5s (above the last bucket)", d.Quantile(0.99).String())
	for _, q := range []float64{0, 1, -0.5, 2} {
		assert.False(t, d.Quantile(q).OK, "q=%v", q)
	}
	empty := servermetrics.Distribution{Bounds: []float64{1}, Counts: []int{0, 0}}
	assert.False(t, empty.Quantile(0.5).OK, "no observation: no quantile")
	assert.Equal(t, "no observation", empty.Quantile(0.5).String())
	// Monotone in q.
	prev := time.Duration(0)
	for q := 0.01; q < 1; q += 0.01 {
		v := d.Quantile(q).Value
		assert.GreaterOrEqual(t, v, prev, "q=%v", q)
		prev = v
	}
}

// TestDeltaProblems: a restart or changed buckets drop the stage and say
// so; snapshots of two servers or in the wrong order are errors.
func TestDeltaProblems(t *testing.T) {
	before := snap(0, []float64{10, 12, 15, 15}, 16, 8)
	restarted := snap(time.Minute, []float64{1, 1, 2, 2}, 3, 1)
	iv, err := servermetrics.Delta(before, restarted)
	require.NoError(t, err)
	assert.Empty(t, iv.Stages)
	require.Len(t, iv.Problems, 1)
	assert.Contains(t, iv.Problems[0], "vllm:request_queue_time_seconds: its count went down between the scrapes (16 to 3: the server restarted?)")

	rebucketed := snap(time.Minute, []float64{20, 30, 40}, 50, 9)
	rebucketed.Histograms[servermetrics.Queue] = servermetrics.Histogram{Metric: "vllm:request_queue_time_seconds", Bounds: []float64{0.1, 1, 5}, Cumulative: []float64{20, 30, 40}, Count: 50, Sum: 9}
	iv, err = servermetrics.Delta(before, rebucketed)
	require.NoError(t, err)
	assert.Empty(t, iv.Stages)
	assert.Contains(t, iv.Problems[0], "buckets changed")

	bucketDown := snap(time.Minute, []float64{9, 30, 40, 40}, 50, 9) // one bucket fell, the count rose
	iv, err = servermetrics.Delta(before, bucketDown)
	require.NoError(t, err)
	assert.Empty(t, iv.Stages)
	assert.Contains(t, iv.Problems[0], "le=0.3 went down")

	other := snap(time.Minute, []float64{10, 12, 15, 15}, 16, 8)
	other.Server = servermetrics.SGLang
	_, err = servermetrics.Delta(before, other)
	assert.EqualError(t, err, "servermetrics: delta of a vllm and a sglang snapshot")
	_, err = servermetrics.Delta(snap(time.Minute, []float64{10, 12, 15, 15}, 16, 8), before)
	assert.ErrorContains(t, err, "precedes")
}
