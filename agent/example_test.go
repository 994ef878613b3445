package agent_test

import (
	"fmt"
	"time"

	"github.com/tailguard/tailguard/agent"
	"github.com/tailguard/tailguard/fakeprovider"
)

// Per-step budgets worked back from a task target of 10 s for 95% of
// tasks: a plan, then three searches at once beside a 500 ms tool, then
// an answer. Three steps vary (the tool is fixed), so each must meet its
// budget with probability 0.95^(1/3) = 0.98305, and each of the three
// searches 0.98305^(1/3) = 0.99432. The path through the searches has
// three calls, 10 s/3 = 3.333 s each; the path through the tool two
// calls and 500 ms set aside, (10 s - 0.5 s)/2 = 4.75 s each: the
// searches' path binds, it is the critical path.
func ExampleTarget_Budgets() {
	g := agent.Graph{Steps: []agent.Step{
		{Name: "plan"},
		{Name: "search", After: []string{"plan"}, FanOut: agent.FanOut{N: 3}},
		{Name: "fetch", After: []string{"plan"}, Tool: &agent.Tool{Latency: fakeprovider.Fixed(500 * time.Millisecond)}},
		{Name: "answer", After: []string{"search", "fetch"}},
	}}
	plan, err := agent.Target{Budget: 10 * time.Second, TailTasks: 0.05}.Budgets(g)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(plan)
	// Output:
	// task within 10.000s for 95% of tasks: each varying step within its budget with probability 0.98305; tool time set aside on the critical path 0.0ms
	//   plan                 model  copies 1              each call within 3333.3ms at q=0.98305 (critical path)
	//   search               model  copies 3              each call within 3333.3ms at q=0.99432 (critical path)
	//   fetch                tool   copies 1              tool time set aside 500.0ms at q=0.98305
	//   answer               model  copies 1              each call within 3333.3ms at q=0.98305 (critical path)
}

// Validate names what is wrong with a graph: here a step waits for one
// that does not exist, and two steps wait for each other.
func ExampleGraph_Validate() {
	g := agent.Graph{Steps: []agent.Step{
		{Name: "plan", After: []string{"answer"}},
		{Name: "search", After: []string{"plann"}},
		{Name: "answer", After: []string{"plan"}},
	}}
	fmt.Println(g.Validate())
	// Output:
	// agent: graph: step "search": after "plann": no such step in the graph
	// the graph has a cycle: plan -> answer -> plan
}
