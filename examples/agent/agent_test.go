// Package agent judges an agent task whose chain of model calls runs a
// tool between calls: the tool's time counts in every task, so the task
// budget is worked back with it taken out, and the report splits each
// chain into model time and tool time. It runs against a fake preset in
// virtual time; the README shows what it prints, and TestREADMEOutput
// keeps the two the same.
package agent_test

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/internal/format"
	"github.com/tailguard/tailguard/internal/readmetest"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

var update = flag.Bool("update", false, "rewrite README.md's output block with what the test produces")

// The task: 8 model calls with a tool step after each but the last (7
// steps), done within 12 s for 95% of tasks.
const (
	calls     = 8
	budget    = 12 * time.Second
	tailTasks = 0.05
)

// toolLatency is a tool step's latency, drawn from a seeded log-normal
// distribution (median 250 ms, p99 about 1.5 s), the same for a given
// chain, call and seed: a code search, a file read, an HTTP fetch.
func toolLatency(seed uint64, chain, call int) time.Duration {
	r := rand.New(rand.NewPCG(seed, uint64(chain)<<16|uint64(call)))
	sigma := math.Log(1500.0/250.0) / 2.3263 // p99 = median·e^(2.3263σ)
	return time.Duration(250 * math.Exp(sigma*r.NormFloat64()) * float64(time.Millisecond)).Round(time.Millisecond)
}

// tool sleeps for its drawn latency times scale: in the synctest bubble
// that costs no real time and the chain measures it exactly.
func tool(seed uint64, scale time.Duration) func(ctx context.Context, chain, call int) error {
	return func(ctx context.Context, chain, call int) error {
		select {
		case <-time.After(scale * toolLatency(seed, chain, call)):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// run measures 60 chains of calls against the mistral-3-14b-chain preset,
// one chain at a time, with tool steps drawn from seed and scaled.
func run(t *testing.T, seed uint64, scale time.Duration) (cr *latencytest.ChainResult) {
	synctest.Test(t, func(t *testing.T) {
		prof, err := fakeprovider.Preset("mistral-3-14b-chain")
		if err != nil {
			t.Fatal(err)
		}
		fake := fakeprovider.New(prof)
		t.Cleanup(fake.Close)
		p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(fake.Client()), latencytest.WithModel(prof.Model))
		cr, err = latencytest.Chain{Chains: 60, Length: calls, Tool: tool(seed, scale)}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
	})
	return cr
}

// output is what the README quotes: the planning figures and the chain
// report up to its counts (the lines after them name the machine).
func output(task sloassert.Task, rep sloassert.Report) string {
	var sb strings.Builder
	q, perCall := sloassert.Task{Calls: task.Calls, Budget: task.Budget, TailTasks: task.TailTasks}.PerCall()
	fmt.Fprintf(&sb, "per call, tools ignored:   %s within %s\n", sloassert.QuantileName(q), format.Duration(perCall))
	q, perCall = task.PerCall()
	fmt.Fprintf(&sb, "per call, %s of tools: %s within %s\n", format.Duration(task.ToolTime), sloassert.QuantileName(q), format.Duration(perCall))
	return sb.String() + reportHead(rep)
}

// reportHead is a chain report up to its counts (the lines after them
// name the machine).
func reportHead(rep sloassert.Report) string {
	var sb strings.Builder
	for _, line := range strings.Split(rep.String(), "\n") {
		sb.WriteString(line + "\n")
		if strings.HasPrefix(line, "  n = ") {
			break
		}
	}
	return sb.String()
}

func TestAgentTaskWithTools(t *testing.T) {
	cr := run(t, 1, 1)

	// Every chain's total is its calls plus its tool steps, exactly.
	var tools latencytest.Sample
	for _, ch := range cr.Chains {
		if ch.ToolSteps != calls-1 || ch.Total != ch.ModelTime+ch.ToolTime {
			t.Errorf("chain %s: %d tool steps, total %v != model %v + tools %v", ch.ID, ch.ToolSteps, ch.Total, ch.ModelTime, ch.ToolTime)
		}
		tools = append(tools, ch.ToolTime)
	}

	// The task target, worked back with the tools' p95 taken out: the
	// calls share what the tools leave.
	task := sloassert.Task{Calls: calls, Budget: budget, TailTasks: tailTasks, ToolTime: tools.Quantile(0.95)}
	objectives := []sloassert.Objective{sloassert.ChainQ(1-tailTasks, budget), sloassert.MaxChainErrorRate(tailTasks)}
	sloassert.Check(t, cr, objectives...)

	// A slower tool (the same draws, 4x longer: a cold search index)
	// breaks the same task with the same model calls.
	slow := run(t, 1, 4)
	slowRep := sloassert.Evaluate(slow, objectives...)
	if slowRep.OK() {
		t.Errorf("4x slower tools should break the task:\n%s", slowRep)
	}
	if f := slow.Calls().ErrorRate(); f != 0 {
		t.Errorf("the slow-tool run failed %v of its calls: the task should fail on time alone", f)
	}
	got := output(task, sloassert.Evaluate(cr, objectives...)) + "\n4x slower tools, same calls:\n" + reportHead(slowRep)
	if got != readmetest.Output(t, "README.md", got, *update) {
		t.Errorf("README.md's output block is not what the test produces (go test -run TestAgentTaskWithTools -update rewrites it):\n%s", got)
	}
}
