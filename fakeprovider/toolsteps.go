package fakeprovider

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// ToolSteps is the tool steps of agent chains whose time follows a
// distribution: an agent runs the tool a model asked for between two
// calls. Its Wait method is a latencytest.Chain.Tool. The wait after call
// `call` of chain `chain` is drawn from (Seed, chain, call) alone, so a run
// waits the same whatever order its chains run in, and in a synctest
// bubble the chain's ToolTime is exactly the sum of its draws.
type ToolSteps struct {
	// Latency is each step's wait; unset waits nothing.
	Latency Dist[time.Duration]
	// Seed seeds the draws.
	Seed uint64
}

// Validate checks Latency; the error names what is wrong.
func (s ToolSteps) Validate() error {
	if err := s.Latency.validate("latency"); err != nil {
		return errors.New("fakeprovider: tool steps: " + err.Error())
	}
	return nil
}

// Draw is the wait of the tool step after call `call` of chain `chain`.
func (s ToolSteps) Draw(chain, call int) time.Duration {
	if !s.Latency.IsSet() {
		return 0
	}
	r := rand.New(rand.NewPCG(s.Seed^0x5bd1e9955bd1e995, uint64(uint32(chain))<<32|uint64(uint32(call))))
	return s.Latency.Sample(r)
}

// Wait waits Draw(chain, call); it returns ctx's error if ctx ends first.
func (s ToolSteps) Wait(ctx context.Context, chain, call int) error {
	d := s.Draw(chain, call)
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Expected is the mean wait of a step: what a task's budget sets aside
// per tool step (sloassert.Task.ToolTime is the steps' sum). A count is
// rounded only when drawn, so a draw's mean may differ by half a
// nanosecond.
func (s ToolSteps) Expected() time.Duration {
	return time.Duration(math.Round(mean(s.Latency)))
}

// mean is the distribution's mean: a normal is clipped at zero as its
// draws are, an interpolated empirical distribution is the mean of its
// piecewise-linear quantile function, a mixture weighs its parts' means.
func mean[T Quantity](d Dist[T]) float64 {
	switch d.Kind {
	case "fixed":
		return float64(d.Value)
	case "uniform":
		return (float64(d.Min) + float64(d.Max)) / 2
	case "normal":
		m, s := float64(d.Mean), float64(d.Stddev)
		if s == 0 {
			return max(m, 0)
		}
		z := m / s
		return m*normalCDF(z) + s*math.Exp(-z*z/2)/math.Sqrt(2*math.Pi)
	case "lognormal":
		sigma := math.Log(float64(d.P99)/float64(d.Median)) / z99
		return float64(d.Median) * math.Exp(sigma*sigma/2)
	case "empirical":
		v := slices.Clone(d.Values)
		slices.Sort(v)
		sum := 0.0
		for _, x := range v {
			sum += float64(x)
		}
		if !d.Interpolate || len(v) == 1 {
			return sum / float64(len(v))
		}
		return (sum - (float64(v[0])+float64(v[len(v)-1]))/2) / float64(len(v)-1)
	case "mixture":
		m := 0.0
		for _, p := range d.Parts {
			m += p.Weight * mean(p.Dist)
		}
		return m
	}
	return 0
}

// isAttempt reports whether got is "<id>-a<n>" for a whole number n.
func isAttempt(got, id string) bool {
	n, ok := strings.CutPrefix(got, id+"-a")
	if !ok || n == "" {
		return false
	}
	for _, c := range n {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
