package latencytest

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/tailguard/tailguard/internal/sse"
)

// anthropicVersion is the anthropic-version header the Anthropic provider
// sends unless WithHeader sets one.
const anthropicVersion = "2023-06-01"

// defaultAnthropicMaxTokens is the max_tokens the Anthropic provider sends
// when a request sets no cap (the Messages API requires one).
const defaultAnthropicMaxTokens = 4096

// Anthropic returns a Provider that streams from Anthropic's Messages API
// (also served by vLLM and gateways): baseURL is the API root
// ("https://api.anthropic.com/v1"); requests go to baseURL + "/messages"
// with stream true, the key (WithAPIKey) in the x-api-key header (never
// as a bearer token; redacted as WithAPIKey describes) and
// anthropic-version 2023-06-01 (WithHeader("anthropic-version", v)
// sends another). System messages become the top-level system prompt;
// max_tokens is the request's cap, 4096 without one.
// It takes OpenAI's options and measures as OpenAI does: TTFT is the first
// token of any kind (text, thinking, a tool_use block's start or its
// input_json_delta), the first answer is the first text or tool_use (a
// tool-use-only answer is a success), every gap between token events
// counts (ping and signature_delta are not tokens), usage comes from
// message_start and message_delta (PromptTokens is input_tokens plus
// cache_read_input_tokens and cache_creation_input_tokens, CachedTokens
// is cache_read_input_tokens), and the finish reason is stop_reason.
//
// A stream ends well at message_stop, and without it is truncated. An
// error event (overloaded_error, rate_limit_error, api_error) fails the
// request as bad_stream naming the error's type; a 529 up front is
// http_529. A content_block_delta before its content_block_start, a
// message_stop without message_start and tool input that is not JSON
// fail it as bad_stream too. Event types it does not know are skipped
// with a note. It panics if baseURL is not an http(s) URL.
func Anthropic(baseURL string, opts ...LLMOption) *LLMProvider {
	return newOpenAI(baseURL, messagesAPI, func(o *LLMProvider) {
		for _, opt := range opts {
			opt.applyLLM(o)
		}
	})
}

// AnthropicFromEnv returns the Anthropic provider for ANTHROPIC_BASE_URL,
// ANTHROPIC_API_KEY and ANTHROPIC_MODEL. The base URL is taken as
// Anthropic's SDKs take it, without the version ("https://api.anthropic.com"):
// "/v1" is added unless its path already ends in "/v1". The error names the
// variables that are unset. The key must be set but may be empty (for a
// local server without keys); the others must not be empty.
func AnthropicFromEnv(opts ...LLMOption) (*LLMProvider, error) {
	_, u, key, model, err := fromEnv(EnvAnthropicBaseURL, EnvAnthropicAPIKey, EnvAnthropicModel)
	if err != nil {
		return nil, err
	}
	if p := strings.TrimRight(u.Path, "/"); !strings.HasSuffix(p, "/v1") {
		u.Path, u.RawPath = p+"/v1", ""
	}
	all := append([]LLMOption{WithModel(model), WithAPIKey(key)}, opts...)
	return Anthropic(u.String(), all...), nil
}

// anthropicHeaders moves the key to x-api-key and sets anthropic-version
// unless a header set it.
func anthropicHeaders(o *LLMProvider) {
	if o.key != "" {
		o.header.Set("X-Api-Key", o.key)
		o.key = ""
	}
	if o.header.Get("Anthropic-Version") == "" {
		o.header.Set("Anthropic-Version", anthropicVersion)
	}
}

// anthropicPublic is the header value that is no secret: the version.
func anthropicPublic(o *LLMProvider) []string { return o.header.Values("Anthropic-Version") }

// messagesPayload encodes a Messages request.
func messagesPayload(o *LLMProvider, req Request) ([]byte, error) {
	type message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	body := struct {
		MaxTokens   int       `json:"max_tokens"`
		Messages    []message `json:"messages"`
		Model       string    `json:"model"`
		Stream      bool      `json:"stream"`
		System      string    `json:"system,omitempty"`
		Temperature *float64  `json:"temperature,omitempty"`
	}{MaxTokens: req.MaxTokens, Messages: []message{}, Model: o.model, Stream: !o.noStream, Temperature: req.Temperature}
	if body.MaxTokens <= 0 {
		body.MaxTokens = defaultAnthropicMaxTokens
	}
	var system []string
	for _, m := range req.Messages {
		if m.Role == "system" || m.Role == "developer" {
			system = append(system, m.Content)
			continue
		}
		body.Messages = append(body.Messages, message(m))
	}
	body.System = strings.Join(system, "\n\n")
	return json.Marshal(body)
}

// messagesDecoder decodes a Messages API event stream.
type messagesDecoder struct {
	started                      bool
	blocks                       map[int]*messagesBlock
	tools                        int
	input, cacheRead, cacheWrite int
	cachedSeen                   bool
}

// messagesBlock is one content block of the answer.
type messagesBlock struct {
	kind string // text, thinking, redacted_thinking, tool_use…
	tool int    // the tool call's number, from 1 (tool blocks only)
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

// isToolBlock reports whether a content block type is a tool call.
func isToolBlock(kind string) bool {
	return kind == "tool_use" || kind == "server_tool_use" || kind == "mcp_tool_use"
}

func (d *messagesDecoder) terminal() string { return "message_stop" }

func (d *messagesDecoder) event(s *stream, ev sse.Event) (token bool) {
	var e rawMessagesEvent
	typ, ok := decodeEvent(s, ev, &e, &e.Type)
	if !ok {
		return false
	}
	if !d.started && typ != "message_start" && typ != "ping" && typ != "error" && typ != "message_stop" {
		s.note("%s before message_start", truncate(typ, 60))
	}
	switch typ {
	case "message_start":
		if d.started {
			s.note("a second message_start ignored")
			return false
		}
		d.started = true
		var m struct {
			Model json.RawMessage `json:"model"`
			Usage json.RawMessage `json:"usage"`
		}
		if absent(e.Message) || json.Unmarshal(e.Message, &m) != nil {
			s.note("message_start without a message object")
			return false
		}
		if model := s.str("message.model", m.Model); model != "" {
			s.rec.Model = model
		}
		d.usage(s, m.Usage)
	case "content_block_start":
		i, ok := d.index(s, typ, e.Index)
		if !ok {
			return false
		}
		var cb struct {
			Type     json.RawMessage `json:"type"`
			Text     json.RawMessage `json:"text"`
			Thinking json.RawMessage `json:"thinking"`
		}
		if absent(e.ContentBlock) || json.Unmarshal(e.ContentBlock, &cb) != nil {
			s.fail("content_block_start %d without a content_block object", i)
			return false
		}
		if d.blocks == nil {
			d.blocks = map[int]*messagesBlock{}
		}
		if d.blocks[i] != nil {
			s.note("a second content_block_start for block %d ignored", i)
			return false
		}
		b := &messagesBlock{kind: s.str("content_block.type", cb.Type)}
		d.blocks[i] = b
		switch {
		case b.kind == "text":
			if text := s.str("content_block.text", cb.Text); text != "" {
				s.content.WriteString(text)
				s.answerAt()
				return true
			}
		case b.kind == "thinking":
			return s.str("content_block.thinking", cb.Thinking) != ""
		case b.kind == "redacted_thinking":
			return true // the model's reasoning, delivered whole and encrypted
		case isToolBlock(b.kind):
			d.tools++
			b.tool = d.tools
			s.toolCallStarted()
			return true
		}
	case "content_block_delta":
		i, ok := d.index(s, typ, e.Index)
		if !ok {
			return false
		}
		b := d.blocks[i]
		if b == nil {
			s.fail("content_block_delta for block %d before its content_block_start", i)
			return false
		}
		var dl struct {
			Type        json.RawMessage `json:"type"`
			Text        json.RawMessage `json:"text"`
			Thinking    json.RawMessage `json:"thinking"`
			PartialJSON json.RawMessage `json:"partial_json"`
		}
		if absent(e.Delta) || json.Unmarshal(e.Delta, &dl) != nil {
			s.note("content_block_delta without a delta object skipped")
			return false
		}
		switch dt := s.str("delta.type", dl.Type); dt {
		case "text_delta":
			if text := s.str("delta.text", dl.Text); text != "" {
				s.content.WriteString(text)
				s.answerAt()
				return true
			}
		case "thinking_delta":
			return s.str("delta.thinking", dl.Thinking) != ""
		case "input_json_delta":
			if !isToolBlock(b.kind) {
				s.fail("input_json_delta for block %d, a %s block", i, truncate(b.kind, 40))
				return false
			}
			if part := s.str("delta.partial_json", dl.PartialJSON); part != "" {
				b.args.WriteString(part)
				s.toolArgs(b.tool)
				return true
			}
		case "signature_delta", "citations_delta":
			// not generated text: a signature over the thinking, a citation
		default:
			s.note("content_block_delta of unknown type %q skipped", truncate(dt, 60))
		}
	case "content_block_stop":
		i, ok := d.index(s, typ, e.Index)
		if !ok {
			return false
		}
		if b := d.blocks[i]; b != nil && isToolBlock(b.kind) && !validArgs(b.args.String()) {
			s.fail("tool_use block %d: its input is not JSON: %s", i, truncate(b.args.String(), 80))
		}
	case "message_delta":
		var dl struct {
			StopReason json.RawMessage `json:"stop_reason"`
		}
		if !absent(e.Delta) && json.Unmarshal(e.Delta, &dl) == nil {
			if r := s.str("delta.stop_reason", dl.StopReason); r != "" {
				s.rec.FinishReason = r
			}
		}
		d.usage(s, e.Usage)
	case "message_stop":
		if !d.started {
			s.fail("message_stop without message_start")
			return false
		}
		s.done, s.stop = true, true
	case "ping":
	case "error":
		msg := "no error given"
		if !absent(e.Error) {
			msg = errorText(e.Error)
		}
		s.fail("error event: %s", msg)
	default:
		s.unknownEvent(typ)
	}
	return false
}

// index decodes a content block index; a missing or bad one fails the
// stream (the event cannot be placed).
func (d *messagesDecoder) index(s *stream, typ string, raw json.RawMessage) (int, bool) {
	i, err := strconv.Atoi(string(raw))
	if err != nil || i < 0 {
		s.fail("%s without a valid index (%s)", typ, truncate(string(raw), 20))
		return 0, false
	}
	return i, true
}

// usage takes a Messages usage object (message_start's or
// message_delta's, whose counts are cumulative).
func (d *messagesDecoder) usage(s *stream, raw json.RawMessage) {
	var u struct {
		InputTokens              json.RawMessage `json:"input_tokens"`
		OutputTokens             json.RawMessage `json:"output_tokens"`
		CacheReadInputTokens     json.RawMessage `json:"cache_read_input_tokens"`
		CacheCreationInputTokens json.RawMessage `json:"cache_creation_input_tokens"`
	}
	if !s.decodeObject("usage", raw, &u) {
		return
	}
	prompt := false
	if n, ok := s.count("usage.input_tokens", u.InputTokens); ok {
		d.input, prompt = n, true
	}
	if n, ok := s.count("usage.cache_read_input_tokens", u.CacheReadInputTokens); ok {
		d.cacheRead, prompt, d.cachedSeen = n, true, true
	}
	if n, ok := s.count("usage.cache_creation_input_tokens", u.CacheCreationInputTokens); ok {
		d.cacheWrite, prompt = n, true
	}
	if prompt {
		s.rec.PromptTokens, s.rec.UsageReported = min(d.input+d.cacheRead+d.cacheWrite, maxCount), true
	}
	if d.cachedSeen {
		s.rec.CachedTokens, s.rec.CachedReported = d.cacheRead, true
	}
	if n, ok := s.count("usage.output_tokens", u.OutputTokens); ok {
		s.rec.CompletionTokens, s.rec.UsageReported = n, true
	}
}
