package fakeprovider

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const bedrockBody = `{"messages":[{"role":"user","content":[{"text":"hello there"}]}],"inferenceConfig":{"maxTokens":64}}`

// bedrockFrame is a decoded event-stream message: its type and payload.
type bedrockFrame struct {
	messageType, typ string
	payload          map[string]any
}

// bedrockFrames decodes a ConverseStream body with aws-sdk-go-v2's
// decoder (every CRC checked); err is the first frame that failed.
func bedrockFrames(t *testing.T, body io.Reader) (frames []bedrockFrame, err error) {
	t.Helper()
	dec := eventstream.NewDecoder()
	for {
		m, err := dec.Decode(body, nil)
		if errors.Is(err, io.EOF) {
			return frames, nil
		}
		if err != nil {
			return frames, err
		}
		header := func(name string) string {
			if v := m.Headers.Get(name); v != nil {
				return v.String()
			}
			return ""
		}
		f := bedrockFrame{messageType: header(":message-type"), typ: header(":event-type")}
		if f.messageType == "exception" {
			f.typ = header(":exception-type")
		}
		assert.Equal(t, "application/json", header(":content-type"))
		require.NoError(t, json.Unmarshal(m.Payload, &f.payload))
		frames = append(frames, f)
	}
}

func types(frames []bedrockFrame) []string {
	var out []string
	for _, f := range frames {
		out = append(out, f.typ)
	}
	return out
}

// The fake's ConverseStream: AWS event-stream frames in the documented
// order (messageStart, reasoning deltas and their signature, text
// deltas, contentBlockStop, messageStop, metadata with usage and the
// server's latency), at the profile's times; the whole answer at
// /converse; Bedrock's error shape (x-amzn-ErrorType and {"message"});
// faults as Bedrock sends them (a modelStreamErrorException, a frame
// whose CRC fails), each named by Tailguard-Injected.
func TestBedrockRawShapes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := New(Profile{Model: "amazon.nova-lite-v1:0", Seed: 1, TTFT: Fixed(100 * time.Millisecond), ITL: Fixed(10 * time.Millisecond),
			OutputTokens: Fixed(3), ReasoningTokens: Fixed(2), Script: []ScriptEntry{
				{ID: "r429", Status: 429}, {ID: "r529", Status: 529}, {ID: "err", Fault: FaultErrorEvent, AfterToken: 2},
				{ID: "bad", Fault: FaultMalformed, AfterToken: 2}}})
		t.Cleanup(f.Close)
		c := f.Client()
		path := "/model/amazon.nova-lite-v1%3A0/converse-stream"

		start := time.Now()
		resp := post(t, c, path, "ok", bedrockBody)
		assert.Equal(t, 200, resp.StatusCode)
		assert.Equal(t, "application/vnd.amazon.eventstream", resp.Header.Get("Content-Type"))
		assert.Equal(t, "req_fake_0", resp.Header.Get("X-Amzn-Requestid"))
		assert.Empty(t, resp.Header.Get("X-Ratelimit-Limit-Requests"), "Bedrock sends no rate-limit headers")
		frames, err := bedrockFrames(t, resp.Body)
		require.NoError(t, err)
		assert.Equal(t, 140*time.Millisecond, time.Since(start), "100 ms TTFT, then 4 gaps of 10 ms")
		assert.Equal(t, []string{"messageStart", "contentBlockDelta", "contentBlockDelta", "contentBlockDelta", "contentBlockStop",
			"contentBlockDelta", "contentBlockDelta", "contentBlockDelta", "contentBlockStop", "messageStop", "metadata"}, types(frames))
		assert.Equal(t, map[string]any{"contentBlockIndex": 0.0, "delta": map[string]any{"reasoningContent": map[string]any{"text": " Let"}}}, frames[1].payload)
		assert.Equal(t, map[string]any{"contentBlockIndex": 1.0, "delta": map[string]any{"text": " is"}}, frames[5].payload)
		assert.Equal(t, "end_turn", frames[9].payload["stopReason"])
		meta := frames[10].payload
		assert.Equal(t, map[string]any{"latencyMs": 140.0}, meta["metrics"])
		assert.Equal(t, 5.0, meta["usage"].(map[string]any)["outputTokens"])
		assert.Equal(t, ProtocolBedrock, f.Served()[0].Protocol)

		resp = post(t, c, "/model/amazon.nova-lite-v1:0/converse", "whole", bedrockBody)
		b, _ := io.ReadAll(resp.Body)
		var whole struct {
			Output struct {
				Message struct {
					Role    string           `json:"role"`
					Content []map[string]any `json:"content"`
				} `json:"message"`
			} `json:"output"`
			StopReason string         `json:"stopReason"`
			Metrics    map[string]any `json:"metrics"`
		}
		require.NoError(t, json.Unmarshal(b, &whole), string(b))
		assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		assert.Equal(t, "assistant", whole.Output.Message.Role)
		assert.Len(t, whole.Output.Message.Content, 2, "reasoning, then text")
		assert.Equal(t, "end_turn", whole.StopReason)

		for _, tc := range []struct {
			id, typ string
			status  int
		}{{"r429", "ThrottlingException", 429}, {"r529", "ServiceUnavailableException", 529}} {
			resp = post(t, c, path, tc.id, bedrockBody)
			assert.Equal(t, tc.status, resp.StatusCode)
			assert.Equal(t, tc.typ, resp.Header.Get("X-Amzn-Errortype"))
			assert.Equal(t, "http_"+strconv.Itoa(tc.status), resp.Header.Get(HeaderInjected))
			b, _ := io.ReadAll(resp.Body)
			var e map[string]string
			require.NoError(t, json.Unmarshal(b, &e))
			assert.NotEmpty(t, e["message"])
		}

		resp = post(t, c, path, "err", bedrockBody)
		frames, err = bedrockFrames(t, resp.Body)
		require.NoError(t, err)
		last := frames[len(frames)-1]
		assert.Equal(t, "exception", last.messageType)
		assert.Equal(t, "modelStreamErrorException", last.typ)
		assert.Equal(t, 500.0, last.payload["originalStatusCode"])

		resp = post(t, c, path, "bad", bedrockBody)
		assert.Equal(t, "malformed", resp.Header.Get(HeaderInjected))
		_, err = bedrockFrames(t, resp.Body)
		var ce eventstream.ChecksumError
		assert.ErrorAs(t, err, &ce, "the malformed frame's CRC fails")

		for _, tc := range []struct{ path, body, msg string }{
			{"/model/other-model/converse-stream", bedrockBody, "model identifier is invalid"},
			{path, `{"messages":[]}`, "must start with a user message"},
			{path, `{"messages":[{"role":"user","content":[{"text":"x"}]}],"inferenceConfig":{"maxTokens":0}}`, "outside [1,"},
			{path, `{"messages":[{"role":"user","content":[{"text":"x"}]}],"toolConfig":{"tools":[{"toolSpec":{"name":"a"}}],"toolChoice":{"tool":{"name":"b"}}}}`, "is not among the request's tools"},
		} {
			resp := post(t, c, tc.path, "", tc.body)
			b, _ := io.ReadAll(resp.Body)
			assert.Equal(t, 400, resp.StatusCode, string(b))
			assert.Equal(t, "ValidationException", resp.Header.Get("X-Amzn-Errortype"))
			assert.Contains(t, string(b), tc.msg)
		}
	})
}

// Tool calls in parallel: a toolUse contentBlockStart (id, name) per
// call, the names cycling through the request's tools, then the input
// deltas; the inputs are JSON; stopReason tool_use.
func TestBedrockToolUse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := New(Profile{Model: "m", OutputTokens: Fixed(8),
			ToolCalls: ToolCalls{Probability: 1, ArgumentsTokens: Fixed(3), Parallel: Fixed(2)}})
		t.Cleanup(f.Close)
		body := `{"messages":[{"role":"user","content":[{"text":"x"}]}],"toolConfig":{"tools":[{"toolSpec":{"name":"get_weather"}},{"toolSpec":{"name":"get_time"}}]}}`
		resp := post(t, f.Client(), "/model/m/converse-stream", "tools", body)
		frames, err := bedrockFrames(t, resp.Body)
		require.NoError(t, err)
		var names []string
		inputs := map[float64]*bytes.Buffer{}
		for _, fr := range frames {
			switch fr.typ {
			case "contentBlockStart":
				tu := fr.payload["start"].(map[string]any)["toolUse"].(map[string]any)
				names = append(names, tu["name"].(string))
				assert.NotEmpty(t, tu["toolUseId"])
				inputs[fr.payload["contentBlockIndex"].(float64)] = &bytes.Buffer{}
			case "contentBlockDelta":
				in := fr.payload["delta"].(map[string]any)["toolUse"].(map[string]any)["input"].(string)
				inputs[fr.payload["contentBlockIndex"].(float64)].WriteString(in)
			case "messageStop":
				assert.Equal(t, "tool_use", fr.payload["stopReason"])
			}
		}
		assert.Equal(t, []string{"get_weather", "get_time"}, names)
		for i, in := range inputs {
			assert.True(t, json.Valid(in.Bytes()), "block %v input %q", i, in)
		}
		assert.Equal(t, 2, f.Served()[0].ToolCalls)
	})
}

// Over a socket (NewServer), as a Bedrock SDK reaches it: the same
// frames, whole and checked.
func TestBedrockOverSocket(t *testing.T) {
	f := New(Profile{Model: "m", TTFT: Fixed(time.Millisecond), ITL: Fixed(time.Duration(0)), OutputTokens: Fixed(5)})
	defer f.Close()
	srv := NewServer(f)
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/model/m/converse-stream", "application/json", strings.NewReader(bedrockBody))
	require.NoError(t, err)
	defer resp.Body.Close()
	frames, err := bedrockFrames(t, resp.Body)
	require.NoError(t, err)
	assert.Equal(t, "metadata", frames[len(frames)-1].typ)
	assert.Equal(t, "messageStop", frames[len(frames)-2].typ)
}
