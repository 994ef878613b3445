package protocol

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// AnthropicVersion is the anthropic-version header Messages sends unless
// the provider's headers set one.
const AnthropicVersion = "2023-06-01"

// defaultMessagesMaxTokens is the max_tokens Messages sends when a
// request sets no cap (the API requires one).
const defaultMessagesMaxTokens = 4096

// Messages is Anthropic's Messages API: POST {base}/messages, system
// messages as the top-level system prompt, max_tokens always (4096
// without a cap), the key in x-api-key and anthropic-version
// AnthropicVersion. A base URL from the environment is taken as
// Anthropic's SDKs take it, without "/v1" (added unless its path ends in
// "/v1"). A stream ends well at message_stop; error events fail it.
// Hosted tools (server_tool_use, mcp_tool_use) are counted apart from the
// agent's tool_use calls, and their result blocks are neither tokens nor
// answers. The model stops on its own at end_turn and stop_sequence.
var Messages = &Protocol{
	Name: NameMessages, Title: "Anthropic", Kind: "anthropic-messages",
	Path: func(string) string { return "/messages" },
	Body: messagesBody,
	Auth: func(h http.Header, key string) { h.Set("X-Api-Key", key) },
	Env:  Env{BaseURL: "ANTHROPIC_BASE_URL", APIKey: "ANTHROPIC_API_KEY", Model: "ANTHROPIC_MODEL"},
	Header: func(h http.Header) []string {
		if h.Get("Anthropic-Version") == "" {
			h.Set("Anthropic-Version", AnthropicVersion)
		}
		return h.Values("Anthropic-Version")
	},
	BaseURL: func(u *url.URL) {
		if p := strings.TrimRight(u.Path, "/"); !strings.HasSuffix(p, "/v1") {
			u.Path, u.RawPath = p+"/v1", ""
		}
	},
	NewDecoder: func() Decoder { return &messagesDecoder{} },
	Terminal:   "message_stop",
	Whole:      messagesWhole,
	Answer:     "a Messages API message object",
	IsAnswer:   func(b []byte) bool { return objectIs(b, "type", "message") },
	MatchPath:  func(p string) bool { return pathEnds(p, "/messages") },
	MatchEvent: func(typ string, data []byte) bool {
		t := eventTypeOf(typ, data)
		return t == "message_start" || strings.HasPrefix(t, "content_block_") || t == "message_delta" || t == "message_stop"
	},
	EndOfSequence: func(r string) bool { return r == "end_turn" || r == "stop_sequence" },
}

// messagesBody encodes a Messages request.
func messagesBody(r Request) ([]byte, error) {
	body := struct {
		MaxTokens   int       `json:"max_tokens"`
		Messages    []Message `json:"messages"`
		Model       string    `json:"model"`
		Stream      bool      `json:"stream"`
		System      string    `json:"system,omitempty"`
		Temperature *float64  `json:"temperature,omitempty"`
	}{MaxTokens: r.MaxTokens, Messages: []Message{}, Model: r.Model, Stream: r.Stream, Temperature: r.Temperature}
	if body.MaxTokens <= 0 {
		body.MaxTokens = defaultMessagesMaxTokens
	}
	var system []string
	for _, m := range r.Messages {
		if m.Role == "system" || m.Role == "developer" {
			system = append(system, m.Content)
			continue
		}
		body.Messages = append(body.Messages, m)
	}
	body.System = strings.Join(system, "\n\n")
	return json.Marshal(body)
}

// messagesDecoder decodes a Messages API event stream.
type messagesDecoder struct {
	started bool
	blocks  map[int]*messagesBlock
	usage   messagesUsage
}

// messagesUsage keeps the cumulative counts of a Messages answer.
type messagesUsage struct {
	input, cacheRead, cacheWrite int
	cachedSeen                   bool
}

// messagesBlock is one content block of the answer.
type messagesBlock struct {
	kind string // text, thinking, redacted_thinking, tool_use…
	tool int    // the tool call's number, from 1 (the agent's tool_use blocks only)
	args strings.Builder
}

type rawMessagesEvent struct {
	Type         json.RawMessage `json:"type"`
	Message      json.RawMessage `json:"message"`
	Index        json.RawMessage `json:"index"`
	ContentBlock json.RawMessage `json:"content_block"`
	Delta        json.RawMessage `json:"delta"`
	Usage        json.RawMessage `json:"usage"`
	Error        json.RawMessage `json:"error"`
}

// isHostedBlock reports whether a content block type is a call of a tool
// the provider runs (a web search, code execution, an MCP server's tool):
// its input streams as a tool_use block's does, but it is no tool call of
// the agent. Its result comes in a block of its own (web_search_tool_result,
// mcp_tool_result…), which carries no token.
func isHostedBlock(kind string) bool { return kind == "server_tool_use" || kind == "mcp_tool_use" }

// isToolBlock reports whether a content block type is a tool call, the
// agent's or a hosted one: a block whose input streams as JSON.
func isToolBlock(kind string) bool { return kind == "tool_use" || isHostedBlock(kind) }

func (d *messagesDecoder) End(Sink) {}

func (d *messagesDecoder) Event(s Sink, evType string, data []byte) (token bool) {
	var e rawMessagesEvent
	typ, ok := decodeEvent(s, evType, data, &e, &e.Type)
	if !ok {
		return false
	}
	if !d.started && typ != "message_start" && typ != "ping" && typ != "error" && typ != "message_stop" {
		note(s, "%s before message_start", truncate(typ, 60))
	}
	switch typ {
	case "message_start":
		if d.started {
			s.Note("a second message_start ignored")
			return false
		}
		d.started = true
		var m struct {
			Model json.RawMessage `json:"model"`
			Usage json.RawMessage `json:"usage"`
		}
		if absent(e.Message) || json.Unmarshal(e.Message, &m) != nil {
			s.Note("message_start without a message object")
			return false
		}
		if model := str(s, "message.model", m.Model); model != "" {
			s.Model(model)
		}
		d.usage.apply(s, m.Usage)
	case "content_block_start":
		i, ok := blockIndex(s, typ, e.Index)
		if !ok {
			return false
		}
		var cb struct {
			Type     json.RawMessage `json:"type"`
			Text     json.RawMessage `json:"text"`
			Thinking json.RawMessage `json:"thinking"`
		}
		if absent(e.ContentBlock) || json.Unmarshal(e.ContentBlock, &cb) != nil {
			fail(s, "content_block_start %d without a content_block object", i)
			return false
		}
		if d.blocks == nil {
			d.blocks = map[int]*messagesBlock{}
		}
		if d.blocks[i] != nil {
			note(s, "a second content_block_start for block %d ignored", i)
			return false
		}
		b := &messagesBlock{kind: str(s, "content_block.type", cb.Type)}
		d.blocks[i] = b
		switch {
		case b.kind == "text":
			if text := str(s, "content_block.text", cb.Text); text != "" {
				s.Answer(text)
				return true
			}
		case b.kind == "thinking":
			return str(s, "content_block.thinking", cb.Thinking) != ""
		case b.kind == "redacted_thinking":
			return true // the model's reasoning, delivered whole and encrypted
		case isHostedBlock(b.kind):
			s.HostedTool()
			return true // the model wrote the call, but it is no answer
		case b.kind == "tool_use":
			b.tool = s.ToolCall()
			s.ToolName(b.tool)
			return true
		}
	case "content_block_delta":
		i, ok := blockIndex(s, typ, e.Index)
		if !ok {
			return false
		}
		b := d.blocks[i]
		if b == nil {
			fail(s, "content_block_delta for block %d before its content_block_start", i)
			return false
		}
		var dl struct {
			Type        json.RawMessage `json:"type"`
			Text        json.RawMessage `json:"text"`
			Thinking    json.RawMessage `json:"thinking"`
			PartialJSON json.RawMessage `json:"partial_json"`
		}
		if absent(e.Delta) || json.Unmarshal(e.Delta, &dl) != nil {
			s.Note("content_block_delta without a delta object skipped")
			return false
		}
		switch dt := str(s, "delta.type", dl.Type); dt {
		case "text_delta":
			if text := str(s, "delta.text", dl.Text); text != "" {
				s.Answer(text)
				return true
			}
		case "thinking_delta":
			return str(s, "delta.thinking", dl.Thinking) != ""
		case "input_json_delta":
			if !isToolBlock(b.kind) {
				fail(s, "input_json_delta for block %d, a %s block", i, truncate(b.kind, 40))
				return false
			}
			if part := str(s, "delta.partial_json", dl.PartialJSON); part != "" {
				b.args.WriteString(part)
				if b.tool > 0 {
					s.ToolArgs(b.tool)
				}
				return true
			}
		case "signature_delta", "citations_delta":
			// not generated text: a signature over the thinking, a citation
		default:
			note(s, "content_block_delta of unknown type %q skipped", truncate(dt, 60))
		}
	case "content_block_stop":
		i, ok := blockIndex(s, typ, e.Index)
		if !ok {
			return false
		}
		if b := d.blocks[i]; b != nil && isToolBlock(b.kind) && !validArgs(b.args.String()) {
			fail(s, "tool_use block %d: its input is not JSON: %s", i, truncate(b.args.String(), 80))
		}
	case "message_delta":
		var dl struct {
			StopReason json.RawMessage `json:"stop_reason"`
		}
		if !absent(e.Delta) && json.Unmarshal(e.Delta, &dl) == nil {
			if r := str(s, "delta.stop_reason", dl.StopReason); r != "" {
				s.Finish(r)
			}
		}
		d.usage.apply(s, e.Usage)
	case "message_stop":
		if !d.started {
			s.Fail("message_stop without message_start")
			return false
		}
		s.Done()
	case "ping":
	case "error":
		msg := "no error given"
		if !absent(e.Error) {
			msg = errorText(e.Error)
		}
		fail(s, "error event: %s", msg)
	default:
		note(s, "unknown event type %q skipped", truncate(typ, 60))
	}
	return false
}

// blockIndex decodes a content block index; a missing or bad one fails
// the stream (the event cannot be placed).
func blockIndex(s Sink, typ string, raw json.RawMessage) (int, bool) {
	i, err := strconv.Atoi(string(raw))
	if err != nil || i < 0 {
		fail(s, "%s without a valid index (%s)", typ, truncate(string(raw), 20))
		return 0, false
	}
	return i, true
}

// apply takes a Messages usage object (message_start's or
// message_delta's, whose counts are cumulative): the prompt tokens are
// input_tokens plus cache reads and writes, the cached tokens the reads.
func (d *messagesUsage) apply(s Sink, raw json.RawMessage) {
	var u struct {
		InputTokens              json.RawMessage `json:"input_tokens"`
		OutputTokens             json.RawMessage `json:"output_tokens"`
		CacheReadInputTokens     json.RawMessage `json:"cache_read_input_tokens"`
		CacheCreationInputTokens json.RawMessage `json:"cache_creation_input_tokens"`
	}
	if !decodeObject(s, "usage", raw, &u) {
		return
	}
	prompt := false
	if n, ok := count(s, "usage.input_tokens", u.InputTokens); ok {
		d.input, prompt = n, true
	}
	if n, ok := count(s, "usage.cache_read_input_tokens", u.CacheReadInputTokens); ok {
		d.cacheRead, prompt, d.cachedSeen = n, true, true
	}
	if n, ok := count(s, "usage.cache_creation_input_tokens", u.CacheCreationInputTokens); ok {
		d.cacheWrite, prompt = n, true
	}
	if prompt {
		s.Count(PromptTokens, min(d.input+d.cacheRead+d.cacheWrite, maxCount))
	}
	if d.cachedSeen {
		s.Count(CachedTokens, d.cacheRead)
	}
	if n, ok := count(s, "usage.output_tokens", u.OutputTokens); ok {
		s.Count(CompletionTokens, n)
	}
}

// messagesWhole decodes a whole message object: its text blocks, tool
// calls and hosted tools' calls, the stop reason and usage.
func messagesWhole(s Sink, body []byte) error {
	var m struct {
		Model      json.RawMessage `json:"model"`
		StopReason json.RawMessage `json:"stop_reason"`
		Usage      json.RawMessage `json:"usage"`
		Content    []struct {
			Type  string          `json:"type"`
			Text  string          `json:"text"`
			Input json.RawMessage `json:"input"`
		} `json:"content"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return errors.New("the answer is not a message object: " + err.Error())
	}
	if model := str(s, "model", m.Model); model != "" {
		s.Model(model)
	}
	s.Finish(str(s, "stop_reason", m.StopReason))
	(&messagesUsage{}).apply(s, m.Usage)
	var failure string
	for _, c := range m.Content {
		switch {
		case c.Type == "text":
			if c.Text != "" {
				s.Answer(c.Text)
			}
		case isHostedBlock(c.Type):
			s.HostedTool()
		case c.Type == "tool_use":
			if bad := wholeTool(s, string(c.Input)); bad != "" && failure == "" {
				failure = bad
			}
		}
	}
	if failure != "" {
		return errors.New(failure)
	}
	return nil
}
