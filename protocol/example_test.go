package protocol_test

import (
	"fmt"

	"github.com/tailguard/tailguard/protocol"
)

// The table answers by name (a spec's `protocol:`), by request path (what
// Instrument sees) and by a stream's first event.
func ExampleLookup() {
	fmt.Println(protocol.Lookup("messages").Title, protocol.Lookup("").Title)
	fmt.Println(protocol.ByPath("/v1/responses").Name, protocol.ByPath("/v1/chat/completions").Name)
	fmt.Println(protocol.ByEvent("message_start", []byte(`{"type":"message_start"}`)).Name)
	fmt.Println(protocol.Names())
	// Output:
	// Anthropic OpenAI
	// responses chat
	// messages
	// [chat responses messages gemini bedrock]
}

// A protocol builds its request from the model and messages: the path
// (after every option, so a vendor may put the model in it) and the body.
func ExampleProtocol() {
	p := protocol.Messages
	body, _ := p.Body(protocol.Request{Model: "claude-x", Stream: true,
		Messages: []protocol.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Hi"}}})
	fmt.Println(p.Path("claude-x"))
	fmt.Println(string(body))
	// Output:
	// /messages
	// {"max_tokens":4096,"messages":[{"role":"user","content":"Hi"}],"model":"claude-x","stream":true,"system":"Be brief."}
}
