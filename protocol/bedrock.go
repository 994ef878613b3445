package protocol

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"
)

// BedrockStreamType is the Content-Type of a ConverseStream answer: the
// AWS event stream, binary frames each holding one event.
const BedrockStreamType = "application/vnd.amazon.eventstream"

// Bedrock is Amazon Bedrock's Converse API, streamed (ConverseStream):
// POST {endpoint}/model/{modelId}/converse-stream, the model ID
// path-escaped as AWS's SDKs escape it, the messages as Converse's
// content blocks ({"role", "content": [{"text"}]}, consecutive messages
// of one role joined), system messages as the top-level system blocks,
// and the cap and temperature in inferenceConfig; /converse for a whole
// answer. Requests are signed with SigV4 (service "bedrock") from the
// AWS environment variables (see BedrockSigner), or carry a Bedrock API
// key as a bearer token (AWS_BEARER_TOKEN_BEDROCK, WithAPIKey).
//
// The answer is an AWS event stream (application/vnd.amazon.eventstream),
// its frames checked and decoded by aws-sdk-go-v2's eventstream package.
// Text deltas are the answer; reasoningContent deltas are reasoning
// (tokens, never the answer); a toolUse block's start is a tool call
// with its name, its input deltas the call's arguments (JSON at
// contentBlockStop). messageStop's stopReason is the finish reason:
// end_turn and stop_sequence end the sequence, max_tokens and tool_use
// are successes, guardrail_intervened and content_filtered fail as
// content_filter. The metadata event that follows carries usage
// (prompt tokens are inputTokens plus cacheReadInputTokens and
// cacheWriteInputTokens; cached tokens the reads) and metrics.latencyMs,
// the server's own latency (Sink.ServerLatency). A stream ends well at
// messageStop (metadata read when it comes); without it, it is
// truncated. An exception event fails the stream with the HTTP class of
// the status Bedrock documents for it (throttlingException http_429,
// modelStreamErrorException http_424, ...: see BedrockExceptionStatus).
var Bedrock = &Protocol{
	Name: NameBedrock, Title: "Bedrock", Kind: "bedrock-converse",
	Path:       func(model string) string { return "/model/" + bedrockEscape(model) + "/converse-stream" },
	WholePath:  func(model string) string { return "/model/" + bedrockEscape(model) + "/converse" },
	Body:       bedrockBody,
	Env:        Env{BaseURL: "AWS_ENDPOINT_URL_BEDROCK_RUNTIME", APIKey: "AWS_BEARER_TOKEN_BEDROCK", Model: "BEDROCK_MODEL_ID"},
	NewFramer:  func() Framer { return newBedrockFramer() },
	StreamType: BedrockStreamType,
	Signer:     BedrockSigner,
	NewDecoder: func() Decoder { return &bedrockDecoder{} },
	Terminal:   "messageStop",
	Whole:      bedrockWhole,
	Answer:     "a Converse answer",
	IsAnswer:   bedrockIsAnswer,
	MatchPath: func(p string) bool {
		return strings.Contains(p, "/model/") && pathEnds(p, "/converse-stream", "/converse")
	},
	ErrorText:     bedrockErrorText,
	EndOfSequence: func(r string) bool { return r == "end_turn" || r == "stop_sequence" },
	Filtered:      func(r string) bool { return r == "guardrail_intervened" || r == "content_filtered" },
}

// bedrockEscape escapes a model ID (or an inference profile's ARN) for
// the path as AWS's SDKs do: every byte but the unreserved ones
// (A-Z a-z 0-9 - . _ ~) percent-encoded, ':' and '/' included.
func bedrockEscape(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := range len(s) {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// bedrockText is a Converse content block of text.
type bedrockText struct {
	Text string `json:"text"`
}

// bedrockMessage is a Converse message.
type bedrockMessage struct {
	Role    string        `json:"role"`
	Content []bedrockText `json:"content"`
}

// bedrockBody encodes a Converse request: the model is in the path.
func bedrockBody(r Request) ([]byte, error) {
	type inference struct {
		MaxTokens   int      `json:"maxTokens,omitempty"`
		Temperature *float64 `json:"temperature,omitempty"`
	}
	body := struct {
		Messages        []bedrockMessage `json:"messages"`
		System          []bedrockText    `json:"system,omitempty"`
		InferenceConfig *inference       `json:"inferenceConfig,omitempty"`
	}{Messages: []bedrockMessage{}}
	for _, m := range r.Messages {
		if m.Role == "system" || m.Role == "developer" {
			body.System = append(body.System, bedrockText{m.Content})
			continue
		}
		if n := len(body.Messages); n > 0 && body.Messages[n-1].Role == m.Role {
			body.Messages[n-1].Content = append(body.Messages[n-1].Content, bedrockText{m.Content})
			continue
		}
		body.Messages = append(body.Messages, bedrockMessage{Role: m.Role, Content: []bedrockText{{m.Content}}})
	}
	if r.MaxTokens > 0 || r.Temperature != nil {
		body.InferenceConfig = &inference{MaxTokens: max(r.MaxTokens, 0), Temperature: r.Temperature}
	}
	return json.Marshal(body)
}

// BedrockExceptionStatus is the HTTP status Bedrock documents for an
// exception (an exception event's :exception-type, in either case of its
// first letter; an error answer's x-amzn-ErrorType): 429 for
// throttlingException, 424 for modelStreamErrorException, 0 for a type
// it does not know.
func BedrockExceptionStatus(typ string) int {
	if typ == "" {
		return 0
	}
	switch strings.ToLower(typ[:1]) + typ[1:] {
	case "throttlingException", "modelNotReadyException":
		return 429
	case "modelStreamErrorException", "modelErrorException":
		return 424
	case "serviceUnavailableException":
		return 503
	case "internalServerException":
		return 500
	case "modelTimeoutException":
		return 408
	case "validationException", "serviceQuotaExceededException":
		return 400
	case "accessDeniedException":
		return 403
	case "resourceNotFoundException":
		return 404
	case "conflictException":
		return 409
	}
	return 0
}

// The event types the framer gives an exception and an error message:
// the prefix, then the exception's type or the error's code.
const (
	bedrockExceptionPrefix = "exception:"
	bedrockErrorPrefix     = "error:"
)

// bedrockDecoder decodes a ConverseStream event stream.
type bedrockDecoder struct {
	started, stopped bool
	blocks           map[int]*bedrockBlock
}

// bedrockBlock is one content block of the answer.
type bedrockBlock struct {
	tool int // the tool call's number, from 1 (0: not a toolUse block)
	args strings.Builder
}

// rawBedrockEvent holds every field of the events the decoder reads.
type rawBedrockEvent struct {
	ContentBlockIndex json.RawMessage `json:"contentBlockIndex"`
	Start             json.RawMessage `json:"start"`
	Delta             json.RawMessage `json:"delta"`
	StopReason        json.RawMessage `json:"stopReason"`
	Usage             json.RawMessage `json:"usage"`
	Metrics           json.RawMessage `json:"metrics"`
	Message           json.RawMessage `json:"message"`
	OriginalStatus    json.RawMessage `json:"originalStatusCode"`
	OriginalMessage   json.RawMessage `json:"originalMessage"`
}

// End ends a stream that reached messageStop but not its metadata (cut
// after it) well: the answer is whole, its usage not reported.
func (d *bedrockDecoder) End(s Sink) {
	if d.stopped {
		s.Note("the stream ended after messageStop without its metadata event: usage not reported")
		s.Done()
	}
}

func (d *bedrockDecoder) Event(s Sink, typ string, data []byte) (token bool) {
	var e rawBedrockEvent
	if err := json.Unmarshal(data, &e); err != nil {
		if t, ok := strings.CutPrefix(typ, bedrockExceptionPrefix); ok {
			bedrockException(s, t, e, strings.TrimSpace(string(data)))
			return false
		}
		fail(s, "malformed %s event: %s", truncate(typ, 60), err.Error())
		return false
	}
	if t, ok := strings.CutPrefix(typ, bedrockExceptionPrefix); ok {
		bedrockException(s, t, e, "")
		return false
	}
	if code, ok := strings.CutPrefix(typ, bedrockErrorPrefix); ok {
		fail(s, "error message %s: %s", truncate(code, 60), str(s, "message", e.Message))
		return false
	}
	if !d.started && typ != "messageStart" {
		note(s, "%s before messageStart", truncate(typ, 60))
	}
	switch typ {
	case "messageStart":
		if d.started {
			s.Note("a second messageStart ignored")
		}
		d.started = true
	case "contentBlockStart":
		return d.blockStart(s, e)
	case "contentBlockDelta":
		return d.blockDelta(s, e)
	case "contentBlockStop":
		i, ok := blockIndex(s, typ, e.ContentBlockIndex)
		if !ok {
			return false
		}
		if b := d.blocks[i]; b != nil && b.tool > 0 && !validArgs(b.args.String()) {
			fail(s, "toolUse block %d: its input is not JSON: %s", i, truncate(b.args.String(), 80))
		}
	case "messageStop":
		if r := str(s, "stopReason", e.StopReason); r != "" {
			s.Finish(r)
		}
		d.stopped = true
	case "metadata":
		bedrockUsage(s, e.Usage)
		bedrockMetrics(s, e.Metrics)
		if d.stopped {
			s.Done()
		}
	default:
		note(s, "unknown event type %q skipped", truncate(typ, 60))
	}
	return false
}

// block returns content block i, made on its first event (Bedrock
// starts a text or reasoning block with its first delta).
func (d *bedrockDecoder) block(i int) *bedrockBlock {
	if d.blocks == nil {
		d.blocks = map[int]*bedrockBlock{}
	}
	b := d.blocks[i]
	if b == nil {
		b = &bedrockBlock{}
		d.blocks[i] = b
	}
	return b
}

// blockStart decodes contentBlockStart: a toolUse start is a tool call,
// named.
func (d *bedrockDecoder) blockStart(s Sink, e rawBedrockEvent) bool {
	i, ok := blockIndex(s, "contentBlockStart", e.ContentBlockIndex)
	if !ok {
		return false
	}
	var start struct {
		ToolUse json.RawMessage `json:"toolUse"`
	}
	if !decodeObject(s, "start", e.Start, &start) || absent(start.ToolUse) {
		return false
	}
	if d.blocks[i] != nil {
		note(s, "a second contentBlockStart for block %d ignored", i)
		return false
	}
	b := d.block(i)
	b.tool = s.ToolCall()
	s.ToolName(b.tool)
	return true
}

// blockDelta decodes contentBlockDelta: text, reasoning or tool input.
func (d *bedrockDecoder) blockDelta(s Sink, e rawBedrockEvent) bool {
	i, ok := blockIndex(s, "contentBlockDelta", e.ContentBlockIndex)
	if !ok {
		return false
	}
	var dl struct {
		Text             json.RawMessage `json:"text"`
		ReasoningContent json.RawMessage `json:"reasoningContent"`
		ToolUse          json.RawMessage `json:"toolUse"`
	}
	if !decodeObject(s, "delta", e.Delta, &dl) {
		s.Note("contentBlockDelta without a delta object skipped")
		return false
	}
	switch {
	case !absent(dl.Text):
		if text := str(s, "delta.text", dl.Text); text != "" {
			d.block(i)
			s.Answer(text)
			return true
		}
	case !absent(dl.ReasoningContent):
		var rc struct {
			Text            json.RawMessage `json:"text"`
			RedactedContent json.RawMessage `json:"redactedContent"`
		}
		if !decodeObject(s, "delta.reasoningContent", dl.ReasoningContent, &rc) {
			return false
		}
		d.block(i)
		// Reasoning text, or reasoning delivered encrypted; a signature
		// alone is no generated text.
		return str(s, "delta.reasoningContent.text", rc.Text) != "" || str(s, "delta.reasoningContent.redactedContent", rc.RedactedContent) != ""
	case !absent(dl.ToolUse):
		b := d.blocks[i]
		if b == nil || b.tool == 0 {
			fail(s, "toolUse delta for block %d before its toolUse contentBlockStart", i)
			return false
		}
		var tu struct {
			Input json.RawMessage `json:"input"`
		}
		if decodeObject(s, "delta.toolUse", dl.ToolUse, &tu) {
			if part := str(s, "delta.toolUse.input", tu.Input); part != "" {
				b.args.WriteString(part)
				s.ToolArgs(b.tool)
				return true
			}
		}
	default:
		s.Note("contentBlockDelta of an unknown kind skipped")
	}
	return false
}

// bedrockException fails the stream on an exception event of type typ:
// with its documented status's class, or as a bad stream when the type
// is unknown. raw is the payload when it is not JSON.
func bedrockException(s Sink, typ string, e rawBedrockEvent, raw string) {
	msg := raw
	if raw == "" {
		msg = str(s, "message", e.Message)
	}
	if !absent(e.OriginalStatus) {
		msg += " (the model's status " + truncate(string(e.OriginalStatus), 10) + ")"
	}
	reason := typ + " event: " + truncate(msg, 200)
	if status := BedrockExceptionStatus(typ); status != 0 {
		s.FailStatus(status, reason)
		return
	}
	s.Fail(reason)
}

// bedrockUsage records a Converse usage object: the prompt tokens are
// inputTokens plus the cache's reads and writes, the cached tokens the
// reads.
func bedrockUsage(s Sink, raw json.RawMessage) {
	var u struct {
		InputTokens           json.RawMessage `json:"inputTokens"`
		OutputTokens          json.RawMessage `json:"outputTokens"`
		CacheReadInputTokens  json.RawMessage `json:"cacheReadInputTokens"`
		CacheWriteInputTokens json.RawMessage `json:"cacheWriteInputTokens"`
	}
	if !decodeObject(s, "usage", raw, &u) {
		return
	}
	in, inOK := count(s, "usage.inputTokens", u.InputTokens)
	read, readOK := count(s, "usage.cacheReadInputTokens", u.CacheReadInputTokens)
	write, writeOK := count(s, "usage.cacheWriteInputTokens", u.CacheWriteInputTokens)
	if inOK || readOK || writeOK {
		s.Count(PromptTokens, min(in+read+write, maxCount))
	}
	if readOK {
		s.Count(CachedTokens, read)
	}
	if n, ok := count(s, "usage.outputTokens", u.OutputTokens); ok {
		s.Count(CompletionTokens, n)
	}
}

// bedrockMetrics records metrics.latencyMs, the server's latency.
func bedrockMetrics(s Sink, raw json.RawMessage) {
	var m struct {
		LatencyMs json.RawMessage `json:"latencyMs"`
	}
	if !decodeObject(s, "metrics", raw, &m) || absent(m.LatencyMs) {
		return
	}
	ms, err := strconv.ParseInt(string(m.LatencyMs), 10, 64)
	if err != nil || ms < 0 || ms > int64(maxCount) {
		note(s, "metrics.latencyMs = %s ignored: not a latency in milliseconds", truncate(string(m.LatencyMs), 40))
		return
	}
	s.ServerLatency(time.Duration(ms) * time.Millisecond)
}

// bedrockIsAnswer reports whether a body is a Converse answer: an
// output.message and a stopReason.
func bedrockIsAnswer(body []byte) bool {
	var a struct {
		Output struct {
			Message json.RawMessage `json:"message"`
		} `json:"output"`
		StopReason json.RawMessage `json:"stopReason"`
	}
	return json.Unmarshal(body, &a) == nil && !absent(a.Output.Message) && !absent(a.StopReason)
}

// bedrockWhole decodes a whole Converse answer: its text and toolUse
// blocks (reasoningContent is no answer), the stop reason, usage and
// metrics.
func bedrockWhole(s Sink, body []byte) error {
	var a struct {
		Output struct {
			Message *struct {
				Content []struct {
					Text    *string `json:"text"`
					ToolUse *struct {
						Input json.RawMessage `json:"input"`
					} `json:"toolUse"`
				} `json:"content"`
			} `json:"message"`
		} `json:"output"`
		StopReason json.RawMessage `json:"stopReason"`
		Usage      json.RawMessage `json:"usage"`
		Metrics    json.RawMessage `json:"metrics"`
	}
	if err := json.Unmarshal(body, &a); err != nil {
		return errors.New("the answer is not a Converse answer: " + err.Error())
	}
	if a.Output.Message == nil {
		return errors.New("the answer is not a Converse answer: no output.message")
	}
	s.Finish(str(s, "stopReason", a.StopReason))
	bedrockUsage(s, a.Usage)
	bedrockMetrics(s, a.Metrics)
	var failure string
	for _, c := range a.Output.Message.Content {
		switch {
		case c.Text != nil && *c.Text != "":
			s.Answer(*c.Text)
		case c.ToolUse != nil:
			if bad := wholeTool(s, string(c.ToolUse.Input)); bad != "" && failure == "" {
				failure = bad
			}
		}
	}
	if failure != "" {
		return errors.New(failure)
	}
	return nil
}

// bedrockErrorText reads a Bedrock error body: {"message": ...} (or
// "Message"), with its "__type" when the body names one.
func bedrockErrorText(b []byte) (string, bool) {
	var e struct {
		Message  *string `json:"message"`
		MessageU *string `json:"Message"`
		Type     string  `json:"__type"`
	}
	if json.Unmarshal(b, &e) != nil {
		return "", false
	}
	msg := e.Message
	if msg == nil {
		msg = e.MessageU
	}
	if msg == nil {
		return ErrorText(b)
	}
	if t := e.Type[strings.LastIndexByte(e.Type, '#')+1:]; t != "" {
		return truncate(t+": "+*msg, 200), true
	}
	return truncate(*msg, 200), true
}
