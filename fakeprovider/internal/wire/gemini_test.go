package wire

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestGeminiParse: the prompt is the systemInstruction and the contents'
// text, the cap maxOutputTokens, the tools functionDeclarations and the
// choice functionCallingConfig; the URL gives the model and whether the
// answer streams; bad bodies and URLs are refused with Google's status.
func TestGeminiParse(t *testing.T) {
	r, err := parseGemini([]byte(`{"systemInstruction":{"parts":[{"text":"be "}]},"contents":[{"role":"user","parts":[{"text":"brief"}]},`+
		`{"role":"model","parts":[{"text":" ok"}]}],"generationConfig":{"maxOutputTokens":9,"thinkingConfig":{"includeThoughts":true}},`+
		`"tools":[{"functionDeclarations":[{"name":"f"},{"name":"g"}]}],"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["g"]}}}`), "m", 100)
	if err != nil || r.Prompt != "be brief ok" || r.MaxTokens != 9 || !r.IncludeUsage || !r.MustCall || r.ToolName(0) != "g" || r.ToolName(1) != "g" {
		t.Errorf("parsed %+v (%v)", r, err)
	}
	r, err = parseGemini([]byte(`{"contents":[{"parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":[{"name":"f"}]}],"toolConfig":{"functionCallingConfig":{"mode":"NONE"}}}`), "m", 100)
	if err != nil || !r.NoTools || r.MaxTokens != 0 {
		t.Errorf("NONE: %+v (%v)", r, err)
	}
	for body, msg := range map[string]string{
		`{"contents":`: "Invalid JSON payload",
		`{}`:           "contents is not specified",
		`{"contents":[{"role":"assistant","parts":[{"text":"x"}]}]}`:                         "contents[0].role",
		`{"contents":[{"role":"user"}]}`:                                                     "contents[0].parts",
		`{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"maxOutputTokens":101}}`: "outside [1, 100]",
		`{"contents":[{"parts":[{"text":"x"}]}],"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["h"]}},` +
			`"tools":[{"functionDeclarations":[{"name":"f"}]}]}`: `tool "h" is not among`,
	} {
		if _, err := parseGemini([]byte(body), "m", 100); err == nil || err.Status != 400 || err.Type != "INVALID_ARGUMENT" || !strings.Contains(err.Message, msg) {
			t.Errorf("%s: error %+v, want a 400 INVALID_ARGUMENT naming %q", body, err, msg)
		}
	}
	for raw, want := range map[string]struct {
		status int
		stream bool
	}{
		"http://h/v1beta/models/m:streamGenerateContent?alt=sse": {0, true},
		"http://h/v1beta/models/m:generateContent":               {0, false},
		"http://h/v1beta/models/m:streamGenerateContent":         {400, true},
		"http://h/v1beta/models/x:generateContent":               {404, false},
		"http://h/gw/m:generateContent":                          {404, false},
	} {
		u, _ := url.Parse(raw)
		var r Request
		status := 0
		if err := geminiURL(u, &r, "m"); err != nil {
			status = err.Status
		}
		if status != want.status || r.Stream != want.stream {
			t.Errorf("%s: status %d stream %v, want %d and %v", raw, status, r.Stream, want.status, want.stream)
		}
	}
}

// TestGeminiEncoder: every chunk is one CRLF-framed data event of a
// GenerateContentResponse; thoughts are thought parts, text parts carry
// the words, a call's functionCall part (whole, args a JSON object)
// comes with its last argument token and nothing before it; the last
// chunk has the finish reason and the whole usage; the whole answer
// holds the same parts.
func TestGeminiEncoder(t *testing.T) {
	for _, tools := range []bool{false, true} {
		st := &State{Index: 7, Created: time.Unix(1_700_000_000, 0), Model: "m", PromptTokens: 10, CachedTokens: 4, Reasoning: 3,
			IncludeUsage: true, ToolName: func(call int) string { return []string{"f", "g"}[call%2] }}
		content := 5
		if tools {
			st.ToolCall, st.ToolArgs = true, []int{3, 2}
		}
		e := newGemini(st)
		b := e.Start(nil)
		var perCall []int // the length of each Tokens write
		for from := 0; from < st.Reasoning+content; from++ {
			kind := KindReasoning
			if from >= st.Reasoning {
				kind = map[bool]Kind{false: KindText, true: KindTool}[tools]
			}
			n := len(b)
			b = e.Tokens(b, from, 1, kind)
			perCall = append(perCall, len(b)-n)
		}
		b = e.End(b, st.Reasoning, content, "length")
		var thoughts, text string
		var calls []string
		evs := strings.Split(strings.TrimSuffix(string(b), "\r\n\r\n"), "\r\n\r\n")
		for i, ev := range evs {
			var ch struct {
				Candidates []struct {
					Content struct {
						Parts []struct {
							Text         string          `json:"text"`
							Thought      bool            `json:"thought"`
							FunctionCall json.RawMessage `json:"functionCall"`
						} `json:"parts"`
					} `json:"content"`
					FinishReason string `json:"finishReason"`
				} `json:"candidates"`
				UsageMetadata map[string]int `json:"usageMetadata"`
			}
			d, ok := strings.CutPrefix(ev, "data: ")
			if !ok || strings.Contains(d, "\n") || json.Unmarshal([]byte(d), &ch) != nil || len(ch.Candidates) != 1 {
				t.Fatalf("tools %v: event %d is no Gemini chunk: %q", tools, i, ev)
			}
			for _, p := range ch.Candidates[0].Content.Parts {
				switch {
				case p.FunctionCall != nil:
					calls = append(calls, string(p.FunctionCall))
				case p.Thought:
					thoughts += p.Text
				default:
					text += p.Text
				}
			}
			last := i == len(evs)-1
			if last != (ch.Candidates[0].FinishReason == "MAX_TOKENS") || last && (ch.UsageMetadata["candidatesTokenCount"] != 5 ||
				ch.UsageMetadata["thoughtsTokenCount"] != 3 || ch.UsageMetadata["cachedContentTokenCount"] != 4 || ch.UsageMetadata["totalTokenCount"] != 18) {
				t.Errorf("tools %v: event %d: finish %q usage %v", tools, i, ch.Candidates[0].FinishReason, ch.UsageMetadata)
			}
		}
		if thoughts != string(AppendText(nil, 0, 3, true)) {
			t.Errorf("tools %v: thoughts %q", tools, thoughts)
		}
		whole, _ := json.Marshal(e.Answer(st.Reasoning, content, "stop"))
		if !tools {
			if want := string(AppendText(nil, 3, content, false)); text != want || !strings.Contains(string(whole), want) {
				t.Errorf("text %q, want %q; whole %s", text, want, whole)
			}
			continue
		}
		want := []string{`{"name":"f","args":{"query":" tail"}}`, `{"name":"g","args":{"query":""}}`}
		if len(calls) != 2 || calls[0] != want[0] || calls[1] != want[1] || text != "" {
			t.Errorf("calls %q text %q, want %q", calls, text, want)
		}
		// Tokens 3..7 are the calls' 3+2 argument tokens: a write at the
		// last token of each (5 and 7) and none before.
		if perCall[3] != 0 || perCall[4] != 0 || perCall[5] == 0 || perCall[6] != 0 || perCall[7] == 0 {
			t.Errorf("bytes written per token %v", perCall)
		}
		if !strings.Contains(string(whole), want[0]) || !strings.Contains(string(whole), want[1]) || !strings.Contains(string(whole), `"finishReason":"STOP"`) {
			t.Errorf("whole answer %s", whole)
		}
		// Cut by the cap within call 1: only call 0 is whole, MAX_TOKENS.
		cut, _ := json.Marshal(e.Answer(st.Reasoning, 4, "length"))
		if !strings.Contains(string(cut), want[0]) || strings.Contains(string(cut), `"name":"g"`) || !strings.Contains(string(cut), `"finishReason":"MAX_TOKENS"`) {
			t.Errorf("cut answer %s", cut)
		}
	}
	e := newGemini(&State{Model: "m"})
	if json.Valid([]byte(strings.TrimPrefix(string(e.Malformed()), "data: "))) {
		t.Errorf("Malformed is valid JSON: %q", e.Malformed())
	}
	if got := string(e.ErrorEvent(nil, "boom")); got != `data: {"error":{"code":500,"message":"boom","status":"INTERNAL"}}`+"\r\n\r\n" {
		t.Errorf("ErrorEvent %q", got)
	}
}
