package agent_test

import (
	"context"
	"fmt"
	"time"

	"github.com/tailguard/tailguard/agent"
	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// A conversation of four turns: each turn resends the history, so its
// prompt grows, and the fake's prefix cache serves the turns before it.
// sloassert.Turn judges one turn index (and ConversationResult.Turn
// gives its records); sloassert.ChainQ on Sessions judges whole sessions.
func ExampleConversation() {
	f := fakeprovider.New(fakeprovider.Profile{Model: "m", TTFT: fakeprovider.Fixed(time.Millisecond),
		ITL: fakeprovider.Fixed(time.Duration(0)), OutputTokens: fakeprovider.Fixed(8)})
	defer f.Close()
	p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()), latencytest.WithModel("m"))
	r, err := agent.Conversation{Sessions: 3, Turns: 4, MaxTokens: 8}.Run(context.Background(), p)
	if err != nil {
		panic(err)
	}
	for _, rec := range r.Sessions.Chains[0].Calls {
		fmt.Printf("%s: %d prompt tokens, %d cached\n", rec.ID, rec.PromptTokens, rec.CachedTokens)
	}
	rep := sloassert.Evaluate(r.Turns(), sloassert.Turn(4, sloassert.Q(sloassert.TTFT, 0.5, time.Second)))
	fmt.Println(rep.Outcomes[0].Objective, rep.OK())
	// Output:
	// conv000-turn01: 200 prompt tokens, 0 cached
	// conv000-turn02: 259 prompt tokens, 192 cached
	// conv000-turn03: 319 prompt tokens, 256 cached
	// conv000-turn04: 378 prompt tokens, 304 cached
	// turn 4: ttft p50 <= 1000.0ms true
}
