package fakeprovider_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
)

// geminiNodeCall is one line of gemini-check.mjs's output.
type geminiNodeCall struct {
	Call     string   `json:"call"`
	Text     string   `json:"text"`
	Thoughts string   `json:"thoughts"`
	Finish   string   `json:"finish"`
	Names    []string `json:"names"`
	Usage    struct {
		Prompt, Candidates, Thoughts int
	} `json:"usage"`
	Status int    `json:"status"`
	Error  string `json:"error"`
}

// TestNodeGeminiSDK runs testdata/node/gemini-check.mjs: Google's Node
// SDK, @google/genai, streamed and whole, text with thought summaries
// and parallel function calls, against fakeprovider servers on loopback
// (as fakellm serves them). What the SDK hands its caller must be what
// the fake served: the text the same streamed and whole, the thoughts
// apart from it, the usage the served tokens, the calls the served calls
// in the request's tool order; a scripted 429 reaches it as an error of
// status 429, served once. It skips as nodeScript says.
func TestNodeGeminiSDK(t *testing.T) {
	node, script := nodeScript(t, "gemini-check.mjs")
	fast := func(p fakeprovider.Profile) (*fakeprovider.Fake, string) {
		p.TTFT, p.ITL = fakeprovider.Fixed(time.Millisecond), fakeprovider.Fixed(100*time.Microsecond)
		f := fakeprovider.New(p)
		t.Cleanup(f.Close)
		srv := fakeprovider.NewServer(f)
		t.Cleanup(srv.Close)
		return f, srv.URL
	}
	p := protoProfile(false)
	p.Script = []fakeprovider.ScriptEntry{{ID: "node-gemini-429", Status: 429}}
	pt := protoProfile(true)
	pt.ToolCalls.Parallel = fakeprovider.Fixed(2)
	f, base := fast(p)
	ft, toolBase := fast(pt)
	out := runNode(t, node, script, "BASE_URL="+base, "TOOL_BASE_URL="+toolBase)
	t.Logf("node %v: %s", nodePackages[len(nodePackages)-1], out)

	served := map[string]fakeprovider.Served{}
	count := map[string]int{}
	for _, sv := range append(f.Served(), ft.Served()...) {
		served[sv.ID] = sv
		count[sv.ID]++
	}
	calls := map[string]geminiNodeCall{}
	for line := range bytes.Lines(out) {
		var c geminiNodeCall
		if err := json.Unmarshal(line, &c); err != nil {
			t.Fatalf("gemini-check.mjs printed %q: %v", line, err)
		}
		calls[c.Call] = c
	}
	ids := map[string]string{"stream": "node-gemini-stream", "whole": "node-gemini-whole",
		"stream-tools": "node-gemini-tools", "whole-tools": "node-gemini-tools-whole"}
	for call, id := range ids {
		c, ok := calls[call]
		sv := served[id]
		if !ok || count[id] != 1 || sv.Protocol != fakeprovider.ProtocolGemini || sv.Status != 200 || sv.Canceled {
			t.Errorf("%s: reported %v, served %d times: %+v", call, ok, count[id], sv)
			continue
		}
		if c.Finish != "STOP" || c.Usage.Prompt != 2 || c.Usage.Candidates != sv.Tokens-sv.ReasoningTokens ||
			c.Usage.Thoughts != sv.ReasoningTokens || sv.ReasoningTokens != 3 || c.Thoughts == "" {
			t.Errorf("%s: finish %q usage %+v thoughts %q; served %d tokens (%d reasoning)", call, c.Finish, c.Usage, c.Thoughts, sv.Tokens, sv.ReasoningTokens)
		}
		if strings.HasSuffix(call, "-tools") {
			if sv.ToolCalls != 2 || !slices.Equal(c.Names, []string{"get_weather", "get_time"}) || c.Text != "" {
				t.Errorf("%s: calls %v text %q, the fake made %d calls", call, c.Names, c.Text, sv.ToolCalls)
			}
		} else if c.Text == "" || len(c.Names) != 0 {
			t.Errorf("%s: text %q calls %v", call, c.Text, c.Names)
		}
	}
	if calls["stream"].Text != calls["whole"].Text || calls["stream"].Thoughts != calls["whole"].Thoughts {
		t.Errorf("streamed %q (%q), whole %q (%q)", calls["stream"].Text, calls["stream"].Thoughts, calls["whole"].Text, calls["whole"].Thoughts)
	}
	if c := calls["429"]; c.Status != 429 || !strings.Contains(c.Error, "RESOURCE_EXHAUSTED") || count["node-gemini-429"] != 1 {
		t.Errorf("429: %+v, served %d times", c, count["node-gemini-429"])
	}
}
