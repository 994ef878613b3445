package servermetrics_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tailguard/tailguard/servermetrics"
)

// twoModels is one vLLM server serving models a (3 requests queued 0.2s
// each, 1 waiting) and b (5 requests queued 2s each, 4 waiting).
const twoModels = `# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{model_name="a"} 1
vllm:num_requests_waiting{model_name="b"} 4
# TYPE vllm:request_queue_time_seconds histogram
vllm:request_queue_time_seconds_bucket{le="0.3",model_name="a"} 3
vllm:request_queue_time_seconds_bucket{le="2.5",model_name="a"} 3
vllm:request_queue_time_seconds_bucket{le="+Inf",model_name="a"} 3
vllm:request_queue_time_seconds_sum{model_name="a"} 0.6
vllm:request_queue_time_seconds_count{model_name="a"} 3
vllm:request_queue_time_seconds_bucket{le="0.3",model_name="b"} 0
vllm:request_queue_time_seconds_bucket{le="2.5",model_name="b"} 5
vllm:request_queue_time_seconds_bucket{le="+Inf",model_name="b"} 5
vllm:request_queue_time_seconds_sum{model_name="b"} 10
vllm:request_queue_time_seconds_count{model_name="b"} 5
`

// TestSourceSelectsSeries: one server, two models: the measured model's
// series by default, the labels asked for when named, every series
// summed otherwise, and Series says which.
func TestSourceSelectsSeries(t *testing.T) {
	for _, tc := range []struct {
		name    string
		src     servermetrics.Source
		n       float64
		waiting float64
		series  string
		why     string
	}{
		{"no model named", servermetrics.Source{}, 8, 5, `all series summed (no model named; model_name: "a", "b")`, "nothing to select by"},
		{"the measured model", servermetrics.Source{Model: "a"}, 3, 1, `model_name="a" (the measured model)`, "the target's model has series of its own"},
		{"an unserved model", servermetrics.Source{Model: "c"}, 8, 5, `all series summed: none has model_name="c", the measured model (model_name: "a", "b")`, "served under another name: summed, and said so"},
		{"labels win", servermetrics.Source{Model: "a", Labels: map[string]string{"model_name": "b"}}, 5, 4, `model_name="b"`, "the labels asked for"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := tc.src.Parse([]byte(twoModels), "")
			require.NoError(t, err)
			assert.Equal(t, tc.n, s.Histograms[servermetrics.Queue].Count, tc.why)
			assert.Equal(t, tc.waiting, s.Gauges[servermetrics.Waiting], tc.why)
			assert.Equal(t, tc.series, s.Series)
		})
	}
	// Package Parse sums every series, as before.
	s, err := servermetrics.Parse([]byte(twoModels), "", servermetrics.Auto)
	require.NoError(t, err)
	assert.Equal(t, 8.0, s.Histograms[servermetrics.Queue].Count)

	_, err = servermetrics.Source{Labels: map[string]string{"model_name": "x"}}.Parse([]byte(twoModels), "")
	assert.EqualError(t, err, `servermetrics: no series of vllm's metrics has model_name="x" (model_name in the text: "a", "b")`)

	tgi, err := os.ReadFile("testdata/tgi.txt")
	require.NoError(t, err)
	s, err = servermetrics.Source{Model: "a"}.Parse(tgi, "")
	require.NoError(t, err)
	assert.Equal(t, "all series summed (no model label)", s.Series)
}

// TestDeltaSeriesChanged: snapshots that read different series do not
// subtract: the interval has no stage and says why.
func TestDeltaSeriesChanged(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	before, err := servermetrics.Source{Model: "c"}.Parse([]byte(twoModels), "")
	require.NoError(t, err)
	after, err := servermetrics.Source{Model: "a"}.Parse([]byte(twoModels), "")
	require.NoError(t, err)
	before.At, after.At = at, at.Add(time.Second)
	iv, err := servermetrics.Delta(before, after)
	require.NoError(t, err)
	assert.Empty(t, iv.Stages)
	require.Len(t, iv.Problems, 1)
	assert.True(t, strings.HasPrefix(iv.Problems[0], "the series read changed between the scrapes"), iv.Problems[0])
	after, err = servermetrics.Source{Model: "c"}.Parse([]byte(twoModels), "")
	require.NoError(t, err)
	after.At = at.Add(time.Second)
	iv, err = servermetrics.Delta(before, after)
	require.NoError(t, err)
	assert.NotEmpty(t, iv.Stages, "the same series subtract")
}
