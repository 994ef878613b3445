package protocol

import (
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// Name names a protocol, as specs spell it (`protocol: chat`) and as the
// fake provider reports it (Served.Protocol).
type Name string

// The built-in protocols' names.
const (
	NameChat      Name = "chat"      // OpenAI chat completions
	NameResponses Name = "responses" // OpenAI's Responses API
	NameMessages  Name = "messages"  // Anthropic's Messages API
	NameGemini    Name = "gemini"    // Google's Gemini API (generateContent)
	NameBedrock   Name = "bedrock"   // Amazon Bedrock's Converse and ConverseStream
)

// Message is one chat message of a request.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Request is what a protocol's Body encodes: the model, the conversation
// and the sampling settings of one call.
type Request struct {
	Model    string
	Messages []Message
	// MaxTokens caps the answer (0: no cap sent, unless the protocol
	// requires one).
	MaxTokens int
	// Temperature is sent when non-nil.
	Temperature *float64
	// Stream asks for a streamed answer (false: the whole answer at once).
	Stream bool
	// Usage asks for token usage in the stream, with the field the
	// protocol's UsageKey names (ignored by a protocol without one).
	Usage bool
}

// Framing is how a streamed answer is cut into events.
type Framing uint8

const (
	// SSE: server-sent events (text/event-stream); a Decoder gets each
	// event's type and data.
	SSE Framing = iota
	// Lines: one event a line (NDJSON and the like), of any Content-Type;
	// a Decoder gets each non-empty line as data, its type "".
	Lines
)

// Protocol is one wire protocol: everything that differs between two LLM
// APIs spoken over HTTP. Fields marked optional take the default named
// when nil or empty. A Protocol must not change once in use.
type Protocol struct {
	// Name names it (in specs, served records and descriptions).
	Name Name
	// Title names it in errors and panics: "OpenAI", "Anthropic".
	Title string
	// Kind describes it in Description.Kind, before " (streaming)" or
	// " (not streaming)": "openai-chat-completions".
	Kind string
	// Path returns the request path, appended to the base URL, for the
	// model (after every option ran): "/chat/completions", or one that
	// holds the model, as Gemini's "/models/{model}:streamGenerateContent";
	// escaped (url.PathEscape what you put in it), and it may end in a
	// query ("?alt=sse"), joined to the base URL's.
	Path func(model string) string
	// WholePath returns the request path of a request that does not
	// stream (WithoutStreaming), as Path does, where the vendor puts that
	// in the path (optional: Path): Gemini's
	// "/models/{model}:generateContent", Bedrock's
	// "/model/{modelId}/converse".
	WholePath func(model string) string
	// Body encodes a request body.
	Body func(r Request) ([]byte, error)
	// Auth sets the key's header on every request (optional; default
	// "Authorization: Bearer <key>"). It is called only with a key.
	Auth func(h http.Header, key string)
	// Header sets the protocol's default headers on the provider's own
	// (which hold the user's) once, at construction, and returns the
	// values that are no secret (e.g. a version) (optional).
	Header func(h http.Header) (public []string)
	// Env names the environment variables of its base URL, key and model
	// (for the FromEnv constructors and specs' endpoint targets).
	Env Env
	// BaseURL completes a base URL read from the environment as the
	// vendor's SDKs take it (optional: used as it is). Anthropic's adds
	// "/v1".
	BaseURL func(u *url.URL)
	// UsageKey is the request field that asks for usage in a stream
	// (chat's "stream_options"; optional). A 400 or 422 answer whose body
	// names it turns it off for the provider and the request is resent
	// without it.
	UsageKey string
	// Framing is how the stream is cut into events (default SSE, which
	// also asks for and requires text/event-stream). NewFramer, when
	// set, frames it instead.
	Framing Framing
	// NewFramer returns the framer of one stream, for a framing of the
	// protocol's own (optional: Framing): Bedrock's binary AWS event
	// stream. Each event it emits is timed at the read that completed it,
	// as an SSE event is.
	NewFramer func() Framer
	// StreamType is the Content-Type of a stream NewFramer frames: sent
	// as Accept, required of a 2xx stream (when the answer names one),
	// and how Instrument tells the protocol of a stream on a path that
	// names none (optional: none asked, none required).
	StreamType string
	// Signer makes the signer of one provider's requests, once, when the
	// provider is built for the request URL u (optional: requests are not
	// signed). It reads its credentials where the vendor's SDKs read
	// them (Bedrock's: the AWS environment variables); nil and no error
	// means it found none, and requests go unsigned. A provider with a
	// key (WithAPIKey) sends the key (Auth) and signs nothing.
	Signer func(u *url.URL) (*Signing, error)
	// Filtered reports whether a finish reason means the provider's
	// content filter stopped the answer, which fails it as
	// content_filter (optional: "content_filter" only).
	Filtered func(finishReason string) bool
	// NewDecoder returns a decoder for one stream.
	NewDecoder func() Decoder
	// Terminal names what a good stream ends with, for the verdict on a
	// stream cut before it: "[DONE]".
	Terminal string
	// Whole decodes a whole (not streamed) answer into s; the error says
	// why body is not the protocol's answer object (the request then fails
	// as bad_stream).
	Whole func(s Sink, body []byte) error
	// Answer names its whole answer object in errors: "a chat completion".
	Answer string
	// IsAnswer reports whether a JSON body is its whole answer object
	// (optional: never).
	IsAnswer func(body []byte) bool
	// MatchPath reports whether a request path is the protocol's (for
	// Instrument, which sees requests it did not build) (optional: never).
	MatchPath func(path string) bool
	// MatchEvent reports whether a stream's first event that names a type
	// is the protocol's, for a path that named none (optional: never).
	MatchEvent func(typ string, data []byte) bool
	// ErrorText extracts the message of an error body (optional: the
	// common shape, see ErrorText).
	ErrorText func(body []byte) (msg string, ok bool)
	// EndOfSequence reports whether a finish reason (as the decoder
	// passes it to Sink.Finish) means the model stopped on its own, so a
	// usage count one above the streamed tokens counts an end-of-sequence
	// token (optional: never). Records are judged by the built-in
	// protocols' rules (see EndsSequence): a protocol of your own reports
	// such a finish as "stop".
	EndOfSequence func(finishReason string) bool
}

// Valid reports what a Protocol lacks to be used: "" when nothing.
func (p *Protocol) Valid() string {
	var missing []string
	if p.Name == "" {
		missing = append(missing, "Name")
	}
	if p.Path == nil {
		missing = append(missing, "Path")
	}
	if p.Body == nil {
		missing = append(missing, "Body")
	}
	if p.NewDecoder == nil {
		missing = append(missing, "NewDecoder")
	}
	if p.Whole == nil {
		missing = append(missing, "Whole")
	}
	if len(missing) == 0 {
		return ""
	}
	return "protocol " + string(p.Name) + " has no " + strings.Join(missing, ", ")
}

// Framer cuts a stream of a protocol's own framing into events (see
// Protocol.NewFramer).
type Framer interface {
	// Feed takes the stream's next bytes and calls emit once for each
	// event they complete, with its type and data (both valid only
	// during the call). An error (a frame that cannot be one: a bad
	// checksum, a length beyond the limit) fails the stream as
	// bad_stream.
	Feed(b []byte, emit func(typ string, data []byte)) error
	// End is called once at the end of the body; an error says it ended
	// inside a frame (the stream is then truncated, unless its decoder
	// saw its end).
	End() error
}

// Signing signs one provider's requests (see Protocol.Signer).
type Signing struct {
	// Sign signs a request before it is sent, on every attempt (a
	// resent request is signed anew): r holds the method, the URL, the
	// Host and every header that is sent (but User-Agent), and r's
	// ContentLength is the body's; bodySHA256 is the body's SHA-256 in
	// lower-case hex. It sets the signature's headers on r.Header. It is
	// called before the request's clock starts: signing is in no
	// latency.
	Sign func(r *http.Request, bodySHA256 string) error
	// Secrets are the values a signature is made with (a secret key, a
	// session token, an access key ID): redacted from everything a
	// record keeps, in every encoding, as an API key is.
	Secrets []string
	// Describe says how requests are signed, for the provider's
	// description: "SigV4 (bedrock, us-east-1)". No secret.
	Describe string
}

// Env names a protocol's environment variables.
type Env struct {
	BaseURL, APIKey, Model string
	// AltAPIKey names the key's variable read when APIKey is unset
	// (optional): Gemini's GOOGLE_API_KEY after GEMINI_API_KEY.
	AltAPIKey string
	// DefaultBaseURL is the base URL when BaseURL is unset or empty
	// (optional: then BaseURL must be set), completed by the protocol's
	// BaseURL as a variable's is.
	DefaultBaseURL string
}

// KeyVar returns the name of the key's variable to read: APIKey, or
// AltAPIKey when APIKey is unset and AltAPIKey is set.
func (e Env) KeyVar() string {
	if _, ok := os.LookupEnv(e.APIKey); !ok && e.AltAPIKey != "" {
		if _, ok := os.LookupEnv(e.AltAPIKey); ok {
			return e.AltAPIKey
		}
	}
	return e.APIKey
}

// Base returns the base URL the environment gives: BaseURL's value, or
// DefaultBaseURL when that is unset or empty.
func (e Env) Base() string {
	if v := os.Getenv(e.BaseURL); v != "" {
		return v
	}
	return e.DefaultBaseURL
}

// Counter names a token count a stream reports.
type Counter uint8

// The token counts.
const (
	PromptTokens     Counter = iota // input tokens, cached ones included
	CompletionTokens                // output tokens, reasoning included
	CachedTokens                    // input tokens served from a prefix cache
	ReasoningTokens                 // output tokens spent reasoning
)

// Sink receives what a Decoder finds in a stream or a whole answer; the
// caller stamps each call with the time of the read that brought it. A
// string passed to a Sink may alias the decoder's input: the Sink copies
// what it keeps.
type Sink interface {
	// Answer adds answer text (the first one is the first answer).
	Answer(text string)
	// Refusal adds refusal text (an answer; the request fails as refusal).
	Refusal(text string)
	// ToolCall counts a new tool call and returns its number, from 1.
	ToolCall() (n int)
	// ToolName says tool call n's name arrived (the first call's times
	// FirstToolCall).
	ToolName(n int)
	// ToolArgs says arguments of tool call n arrived (the first call's
	// last one times ToolArgsDone).
	ToolArgs(n int)
	// HostedTool counts a call of a tool the provider runs itself (a web
	// search, code execution, an MCP server's tool): neither a tool call
	// of the agent nor an answer.
	HostedTool()
	// Model sets the model that answered.
	Model(name string)
	// Finish sets the finish reason.
	Finish(reason string)
	// Count sets a token count (a whole number in [0, 2^31)).
	Count(c Counter, n int)
	// Note adds a note to the record (once per text).
	Note(msg string)
	// Bad marks the stream malformed (the first reason wins) and goes on
	// reading.
	Bad(reason string)
	// Fail marks the stream failed (the first reason wins) and stops it.
	Fail(reason string)
	// Done ends a good stream: nothing after it counts.
	Done()
	// FailStatus marks the stream failed (the first reason wins) and
	// stops it, as an HTTP answer of that status would have failed it
	// up front (class http_<status>): an in-band error a vendor
	// documents with its status (Bedrock's throttlingException is a
	// 429).
	FailStatus(status int, reason string)
	// ServerLatency sets the latency the server reports it spent on the
	// answer (Bedrock's metrics.latencyMs), kept beside the client's.
	ServerLatency(d time.Duration)
}

// Decoder decodes the events of one stream into a Sink.
type Decoder interface {
	// Event decodes one event (its data valid only during the call, and
	// redacted of the provider's secrets) and reports whether it carried
	// a token: answer text, reasoning, a refusal, a tool call, or a
	// hosted tool's call or input (the model wrote them; their results
	// are no token).
	Event(s Sink, typ string, data []byte) (token bool)
	// End is called once when the stream ended, however it did.
	End(s Sink)
}
