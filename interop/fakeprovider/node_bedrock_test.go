package fakeprovider_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
)

// TestNodeBedrockSDK runs testdata/node/bedrock-check.mjs:
// @aws-sdk/client-bedrock-runtime's ConverseStream with tools and
// reasoning against fakeprovider servers on loopback. What the SDK hands
// its caller (text, reasoning, the calls' names and JSON inputs, the stop
// reason, usage) must be what the fake served, and its errors Bedrock's
// exceptions. It skips as nodeScript says.
func TestNodeBedrockSDK(t *testing.T) {
	node, script := nodeScript(t, "bedrock-check.mjs")
	const model = "anthropic.claude-3-7-sonnet-20250219-v1:0"
	fast := func(p fakeprovider.Profile) (*fakeprovider.Fake, string) {
		p.Model = model
		p.TTFT, p.ITL = fakeprovider.Fixed(time.Millisecond), fakeprovider.Fixed(100*time.Microsecond)
		f := fakeprovider.New(p)
		t.Cleanup(f.Close)
		srv := fakeprovider.NewServer(f)
		t.Cleanup(srv.Close)
		return f, srv.URL
	}
	p := protoProfile(false)
	p.Script = []fakeprovider.ScriptEntry{{Request: 2, Status: 429}, {Request: 3, Fault: fakeprovider.FaultErrorEvent, AfterToken: 4}}
	f, url := fast(p)
	pt := protoProfile(true)
	pt.ToolCalls.Parallel = fakeprovider.Fixed(2)
	ft, toolURL := fast(pt)
	out := runNode(t, node, script, "BASE_URL="+url, "TOOL_BASE_URL="+toolURL, "MODEL_ID="+model)
	t.Logf("node @aws-sdk/client-bedrock-runtime: %s", out)

	type call struct {
		Call, Text, Reasoning, Stop, Error string
		Tools                              []struct {
			Name  string
			Input map[string]any
		}
		Usage struct{ InputTokens, OutputTokens int }
	}
	var calls []call
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var one call
		if err := json.Unmarshal([]byte(line), &one); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		calls = append(calls, one)
	}
	if len(calls) != 5 {
		t.Fatalf("%d calls, want 5", len(calls))
	}
	served := append(f.Served(), ft.Served()...)
	for _, sv := range served {
		if sv.Protocol != fakeprovider.ProtocolBedrock {
			t.Errorf("served %+v, want protocol bedrock", sv)
		}
	}
	// The text answers: 3 reasoning tokens, then 8 of text; the usage the
	// fake reported, the text it streamed.
	if c := calls[0]; c.Text != calls[1].Text || c.Reasoning == "" || c.Usage.OutputTokens != served[0].Tokens || c.Stop != "end_turn" {
		t.Errorf("text call %+v, served %+v", c, served[0])
	}
	if c := calls[2]; len(c.Tools) != 2 || ft.Served()[0].ToolCalls != 2 || c.Stop != "tool_use" {
		t.Errorf("tool call %+v, served %+v", c, ft.Served())
	}
	if calls[3].Error != "ThrottlingException" || f.Served()[2].Status != 429 || calls[4].Error != "ModelStreamErrorException" {
		t.Errorf("errors %q %q, served %+v", calls[3].Error, calls[4].Error, f.Served())
	}
}
