package wire

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
)

// BedrockStreamType is the Content-Type of a ConverseStream answer.
const BedrockStreamType = "application/vnd.amazon.eventstream"

// bedrockEncoder writes Amazon Bedrock's ConverseStream frames (AWS
// event-stream messages, written by aws-sdk-go-v2's eventstream.Encoder)
// and its whole Converse answer.
type bedrockEncoder struct {
	st    *State
	enc   *eventstream.Encoder
	frame bytes.Buffer
	open  Kind
	index int // the open content block's index
	call  int // the open (or last) tool call, from 0
	tools int // the answer token the tool calls start at; -1 before them
}

// newBedrock is the encoder of Bedrock's Converse API.
func newBedrock(st *State) Encoder {
	return &bedrockEncoder{st: st, enc: eventstream.NewEncoder(), index: -1, tools: -1}
}

// ContentType is the stream's Content-Type (the fake asks its encoder).
func (e *bedrockEncoder) ContentType() string { return BedrockStreamType }

// message appends one event-stream message: an event of type typ, or
// with exception set an exception of that type, whose payload is v's
// JSON.
func (e *bedrockEncoder) message(b []byte, typ string, exception bool, v any) []byte {
	payload, _ := json.Marshal(v)
	var h eventstream.Headers
	if exception {
		h.Set(":message-type", eventstream.StringValue("exception"))
		h.Set(":exception-type", eventstream.StringValue(typ))
	} else {
		h.Set(":message-type", eventstream.StringValue("event"))
		h.Set(":event-type", eventstream.StringValue(typ))
	}
	h.Set(":content-type", eventstream.StringValue("application/json"))
	e.frame.Reset()
	_ = e.enc.Encode(&e.frame, eventstream.Message{Headers: h, Payload: payload}) // a bytes.Buffer takes any write
	return append(b, e.frame.Bytes()...)
}

func (e *bedrockEncoder) toolUseID() string { return ToolID("tooluse", e.st.Index, e.call) }

// usage is the answer's usage: cached prompt tokens apart from
// inputTokens, as Bedrock counts them.
func (e *bedrockEncoder) usage(output int) obj {
	cached := e.st.CachedTokens
	in := e.st.PromptTokens - cached
	return obj{"inputTokens", in, "outputTokens", output, "totalTokens", in + output + cached,
		"cacheReadInputTokens", cached, "cacheWriteInputTokens", 0}
}

// metrics is the server's latency: from the request's arrival to now,
// in whole milliseconds.
func (e *bedrockEncoder) metrics() obj {
	return obj{"latencyMs", time.Since(e.st.Created).Milliseconds()}
}

func (e *bedrockEncoder) Start(b []byte) []byte {
	return e.message(b, "messageStart", false, obj{"role", "assistant"})
}

func (e *bedrockEncoder) closeBlock(b []byte) []byte {
	if e.open == KindNone {
		return b
	}
	if e.open == KindReasoning {
		b = e.message(b, "contentBlockDelta", false, obj{"contentBlockIndex", e.index,
			"delta", obj{"reasoningContent", obj{"signature", fakeSignature}}})
	}
	e.open = KindNone
	return e.message(b, "contentBlockStop", false, obj{"contentBlockIndex", e.index})
}

func (e *bedrockEncoder) Tokens(b []byte, from, k int, kind Kind) []byte {
	call, within, n := 0, 0, 0
	if kind == KindTool {
		call, within, n = toolCallAt(e.st, &e.tools, from)
	}
	if kind != e.open || kind == KindTool && call != e.call {
		b = e.closeBlock(b)
		e.call = call
		e.open, e.index = kind, e.index+1
		if kind == KindTool { // text and reasoning blocks start with their first delta
			b = e.message(b, "contentBlockStart", false, obj{"contentBlockIndex", e.index,
				"start", obj{"toolUse", obj{"toolUseId", e.toolUseID(), "name", e.st.ToolName(e.call)}}})
		}
	}
	var delta obj
	switch kind {
	case KindReasoning:
		delta = obj{"reasoningContent", obj{"text", string(AppendText(nil, from, k, true))}}
	case KindTool:
		delta = obj{"toolUse", obj{"input", string(AppendArgs(nil, within, k, n))}}
	default:
		delta = obj{"text", string(AppendText(nil, from, k, false))}
	}
	return e.message(b, "contentBlockDelta", false, obj{"contentBlockIndex", e.index, "delta", delta})
}

func (e *bedrockEncoder) End(b []byte, reasoning, content int, finish string) []byte {
	b = e.closeBlock(b)
	b = e.message(b, "messageStop", false, obj{"stopReason", stopReason(finish)})
	return e.message(b, "metadata", false, obj{"usage", e.usage(reasoning + content), "metrics", e.metrics()})
}

// ErrorEvent is Bedrock's mid-stream model error:
// modelStreamErrorException.
func (e *bedrockEncoder) ErrorEvent(b []byte, msg string) []byte {
	return e.message(b, "modelStreamErrorException", true, obj{"message", msg,
		"originalStatusCode", 500, "originalMessage", "generation failed"})
}

// Malformed is a frame whose checksum does not match its bytes.
func (e *bedrockEncoder) Malformed() []byte {
	b := e.message(nil, "contentBlockDelta", false, obj{"contentBlockIndex", 0, "delta", obj{"text", "tr"}})
	b[len(b)-1] ^= 0xFF
	return b
}

func (e *bedrockEncoder) Answer(reasoning, content int, finish string) any {
	a := e.st.parts(reasoning, content)
	var blocks []any
	if reasoning > 0 {
		blocks = append(blocks, obj{"reasoningContent", obj{"reasoningText", obj{"text", a.reasoning, "signature", fakeSignature}}})
	}
	switch {
	case content > 0 && e.st.ToolCall:
		for call, args := range a.args {
			input := json.RawMessage(args)
			if !json.Valid(input) { // cut short by maxTokens
				input = json.RawMessage("{}")
			}
			e.call = call
			blocks = append(blocks, obj{"toolUse", obj{"toolUseId", e.toolUseID(), "name", e.st.ToolName(e.call), "input", input}})
		}
	case content > 0:
		blocks = append(blocks, obj{"text", a.text})
	}
	if blocks == nil {
		blocks = []any{}
	}
	return obj{"output", obj{"message", obj{"role", "assistant", "content", blocks}},
		"stopReason", stopReason(finish), "usage", e.usage(reasoning + content), "metrics", e.metrics()}
}

// BedrockErrorType is the exception Bedrock names an HTTP status by
// (its x-amzn-ErrorType header).
func BedrockErrorType(status int) string {
	switch status {
	case 400:
		return "ValidationException"
	case 403:
		return "AccessDeniedException"
	case 404:
		return "ResourceNotFoundException"
	case 408:
		return "ModelTimeoutException"
	case 424:
		return "ModelErrorException"
	case 429:
		return "ThrottlingException"
	case 500:
		return "InternalServerException"
	}
	if status >= 500 {
		return "ServiceUnavailableException"
	}
	return "ValidationException"
}

// BedrockError is Bedrock's error body: {"message": msg}.
func BedrockError(msg string) []byte {
	b, _ := json.Marshal(obj{"message", msg})
	return b
}

// bedrockRequest is the part of a Converse request the fake reads.
type bedrockRequest struct {
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	System          json.RawMessage `json:"system"`
	InferenceConfig struct {
		MaxTokens *int `json:"maxTokens"`
	} `json:"inferenceConfig"`
	ToolConfig struct {
		Tools []struct {
			ToolSpec struct {
				Name string `json:"name"`
			} `json:"toolSpec"`
		} `json:"tools"`
		ToolChoice json.RawMessage `json:"toolChoice"`
	} `json:"toolConfig"`
}

// parseBedrock validates a Converse body (the model is in the path: the
// fake checks it there, and whether it streams) for a fake whose cap on
// output tokens is maxOut. Errors are to be sent in Bedrock's shape.
func parseBedrock(body []byte, _ string, maxOut int) (Request, *Error) {
	var p Request
	var req bedrockRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return p, badRequest("", "", "invalid JSON body: %v", err)
	}
	if len(req.Messages) == 0 {
		return p, badRequest("messages", "", "A conversation must start with a user message. Try again with a conversation that starts with a user message.")
	}
	if mt := req.InferenceConfig.MaxTokens; mt != nil && (*mt < 1 || *mt > maxOut) {
		return p, badRequest("maxTokens", "", "The maximum tokens you requested (%d) is outside [1, %d].", *mt, maxOut)
	}
	system, err := rawText(req.System)
	if err != nil {
		return p, badRequest("system", "", "system: %v", err)
	}
	var sb strings.Builder
	sb.WriteString(system)
	for i, m := range req.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return p, badRequest("", "", "messages.%d.role: must be user or assistant", i)
		}
		text, err := rawText(m.Content)
		if err != nil || len(m.Content) == 0 {
			return p, badRequest("", "", "messages.%d.content: a list of content blocks is required", i)
		}
		sb.WriteString(text)
	}
	p.setPrompt(sb.String())
	if mt := req.InferenceConfig.MaxTokens; mt != nil {
		p.MaxTokens = *mt
	}
	p.IncludeUsage = true
	var names []string
	for _, t := range req.ToolConfig.Tools {
		if t.ToolSpec.Name != "" {
			names = append(names, t.ToolSpec.Name)
		}
	}
	if aerr := p.setTools(names, bedrockToolChoice(req.ToolConfig.ToolChoice), nil, false); aerr != nil {
		aerr.Status = http.StatusBadRequest
		return p, aerr
	}
	return p, nil
}

// bedrockToolChoice reads a Converse toolChoice: {"auto":{}},
// {"any":{}} or {"tool":{"name":X}}.
func bedrockToolChoice(raw json.RawMessage) toolChoice {
	var c struct {
		Any  json.RawMessage `json:"any"`
		Tool *struct {
			Name string `json:"name"`
		} `json:"tool"`
	}
	if json.Unmarshal(raw, &c) != nil {
		return toolChoice{}
	}
	switch {
	case c.Tool != nil:
		return toolChoice{required: true, named: true, name: c.Tool.Name}
	case len(c.Any) > 0:
		return toolChoice{required: true}
	}
	return toolChoice{}
}

// bedrockMatch reports whether a path is Bedrock's Converse API under any
// prefix: .../model/{modelId}/converse-stream or .../converse.
func bedrockMatch(path string) bool {
	return strings.Contains(path, "/model/") &&
		(strings.HasSuffix(path, "/converse-stream") || strings.HasSuffix(path, "/converse"))
}

// bedrockURL takes the model ID from the path (escaped or not) and
// whether the answer streams (converse-stream); another model is
// Bedrock's invalid-identifier error.
func bedrockURL(u *url.URL, r *Request, model string) *Error {
	_, rest, _ := strings.Cut(u.EscapedPath(), "/model/")
	escaped, method := rest, ""
	if i := strings.LastIndexByte(rest, '/'); i >= 0 {
		escaped, method = rest[:i], rest[i+1:]
	}
	if m, err := url.PathUnescape(escaped); err != nil || m != model {
		return &Error{Status: http.StatusBadRequest, Message: "The provided model identifier is invalid."}
	}
	r.Stream = method == "converse-stream"
	return nil
}
