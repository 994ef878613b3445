package wire

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// chatEncoder writes OpenAI's Chat Completions stream (data-only SSE
// chunks, then data: [DONE]) and its chat.completion answer.
type chatEncoder struct {
	st       *State
	prefix   []byte // `data: {"id":...,"choices":[`
	suffix   []byte // `}\n\n` or `,"usage":null}\n\n`
	started  bool   // a token chunk is written
	toolOpen int    // tool calls whose first chunk is written
}

// NewChat is the encoder of OpenAI's Chat Completions API.
func NewChat(st *State) Encoder {
	return &chatEncoder{st: st}
}

// Start writes nothing (a chat stream opens with its first token) but
// makes the chunks' common prefix and suffix.
func (e *chatEncoder) Start(b []byte) []byte {
	model, _ := json.Marshal(e.st.Model)
	e.prefix = []byte(`data: {"id":"chatcmpl-fake-` + strconv.Itoa(e.st.Index) +
		`","object":"chat.completion.chunk","created":` + strconv.FormatInt(e.st.Created.Unix(), 10) +
		`,"model":` + string(model) + `,"choices":[`)
	e.suffix = []byte("}\n\n")
	if e.st.IncludeUsage {
		e.suffix = []byte(`,"usage":null}` + "\n\n")
	}
	return b
}

// Tokens writes one chunk of tokens; the stream's first chunk is
// preceded by one that gives the role, as OpenAI streams it.
func (e *chatEncoder) Tokens(b []byte, from, k int, kind Kind) []byte {
	first := !e.started
	e.started = true
	if kind == KindTool {
		return e.appendToolCall(b, from-e.st.Reasoning, k, first)
	}
	if first {
		b = e.appendDelta(b, `"role":"assistant","content":""`, "")
	}
	return e.appendTokens(b, from, k, kind == KindReasoning)
}

// End writes the chunk with the finish reason, the usage chunk when the
// request asked for it, then [DONE].
func (e *chatEncoder) End(b []byte, reasoning, content int, finish string) []byte {
	if !e.started {
		b = e.appendDelta(b, `"role":"assistant","content":""`, "")
	}
	b = e.appendDelta(b, "", finish)
	if e.st.IncludeUsage {
		b = append(b, e.prefix...)
		b = append(b, `],"usage":`...)
		b = appendUsage(b, e.st.PromptTokens, reasoning+content, e.st.CachedTokens, reasoning)
		b = append(b, "}\n\n"...)
	}
	return append(b, "data: [DONE]\n\n"...)
}

// ErrorEvent is vLLM's in-band error when generation fails mid-stream:
// data: {"error":{"message":...,"type":"InternalServerError","param":null,"code":500}}
// then data: [DONE].
func (e *chatEncoder) ErrorEvent(b []byte, msg string) []byte {
	data, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": msg, "type": "InternalServerError", "param": nil, "code": http.StatusInternalServerError,
	}})
	b = append(b, "data: "...)
	b = append(b, data...)
	return append(b, "\n\ndata: [DONE]\n\n"...)
}

func (e *chatEncoder) Malformed() []byte {
	return []byte("data: {\"id\":\"chatcmpl-broken\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"delta\":{\"content\":\"tr\n\n")
}

// Answer is the chat.completion object.
func (e *chatEncoder) Answer(reasoning, content int, finish string) any {
	total := reasoning + content
	var text, thought []byte
	if reasoning > 0 {
		thought = AppendText(nil, 0, reasoning, true)
	}
	text = AppendText(nil, reasoning, content, false)
	msg := map[string]any{"role": "assistant", "content": string(text)}
	if e.st.ToolCall && content > 0 {
		msg["content"] = nil
		var calls []map[string]any
		for i, args := range ToolTexts(e.st.ToolArgs, content) {
			calls = append(calls, map[string]any{"id": ToolID("call", e.st.Index, i), "type": "function",
				"function": map[string]any{"name": e.st.ToolName(i), "arguments": args}})
		}
		msg["tool_calls"] = calls
	}
	if reasoning > 0 {
		msg["reasoning_content"] = string(thought)
	}
	usage := json.RawMessage(appendUsage(nil, e.st.PromptTokens, total, e.st.CachedTokens, reasoning))
	return map[string]any{
		"id":      "chatcmpl-fake-" + strconv.Itoa(e.st.Index),
		"object":  "chat.completion",
		"created": e.st.Created.Unix(),
		"model":   e.st.Model,
		"choices": []map[string]any{{"index": 0, "message": msg, "logprobs": nil, "finish_reason": finish}},
		"usage":   usage,
	}
}

// appendDelta appends a whole chunk whose delta holds fields (raw JSON) and
// whose finish_reason is finish ("" for null).
func (e *chatEncoder) appendDelta(b []byte, fields, finish string) []byte {
	b = append(b, e.prefix...)
	b = append(b, `{"index":0,"delta":{`...)
	b = append(b, fields...)
	b = append(b, `},"logprobs":null,"finish_reason":`...)
	if finish == "" {
		b = append(b, "null"...)
	} else {
		b = append(b, '"')
		b = append(b, finish...)
		b = append(b, '"')
	}
	b = append(b, "}]"...)
	return append(b, e.suffix...)
}

// appendTokens appends one chunk carrying tokens [from, from+k).
func (e *chatEncoder) appendTokens(b []byte, from, k int, reasoning bool) []byte {
	b = append(b, e.prefix...)
	if reasoning {
		b = append(b, `{"index":0,"delta":{"reasoning_content":"`...)
	} else {
		b = append(b, `{"index":0,"delta":{"content":"`...)
	}
	b = AppendText(b, from, k, reasoning)
	b = append(b, `"},"logprobs":null,"finish_reason":null}]`...)
	return append(b, e.suffix...)
}

// appendToolCall appends the chunks of a tool call's argument tokens
// [from, from+k) (from counted after the reasoning): before the first,
// the chunk that names the function (with the role when it is the
// stream's first chunk), as OpenAI streams it.
func (e *chatEncoder) appendToolCall(b []byte, from, k int, first bool) []byte {
	call, within, n := ToolAt(e.st.ToolArgs, from)
	index := strconv.Itoa(call)
	if e.toolOpen <= call {
		e.toolOpen = call + 1
		name, _ := json.Marshal(e.st.ToolName(call))
		head := `"tool_calls":[{"index":` + index + `,"id":"` + ToolID("call", e.st.Index, call) +
			`","type":"function","function":{"name":` + string(name) + `,"arguments":""}}]`
		if first {
			head = `"role":"assistant","content":null,` + head
		}
		b = e.appendDelta(b, head, "")
	}
	b = append(b, e.prefix...)
	b = append(b, `{"index":0,"delta":{"tool_calls":[{"index":`+index+`,"function":{"arguments":"`...)
	b = appendEscaped(b, AppendArgs(nil, within, k, n))
	b = append(b, `"}}]},"logprobs":null,"finish_reason":null}]`...)
	return append(b, e.suffix...)
}

// appendUsage appends the usage object.
func appendUsage(b []byte, prompt, completion, cached, reasoning int) []byte {
	b = append(b, `{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(prompt), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(completion), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(prompt+completion), 10)
	b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
	b = strconv.AppendInt(b, int64(cached), 10)
	b = append(b, `},"completion_tokens_details":{"reasoning_tokens":`...)
	b = strconv.AppendInt(b, int64(reasoning), 10)
	return append(b, "}}"...)
}
