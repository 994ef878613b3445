package latencytest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tailguard/tailguard/internal/h1"
	"github.com/tailguard/tailguard/internal/redact"
	"github.com/tailguard/tailguard/protocol"
)

// WithHTTPClient sets the HTTP client (e.g. a fake provider's in-memory
// client). Default: a client with its own transport, which keeps up to
// 1024 idle connections to the endpoint, so that a
// run at any concurrency up to that opens each connection once and no
// measured request pays for connection setup after warm-up (the
// disclosure counts the connections a run opened). A client of your own
// keeps its transport's setting: net/http's default keeps 2, and a run at
// concurrency 50 then opens new connections all along, their setup inside
// TTFT. Batch and Chain tell the
// default transport their concurrency, and a run opens at most that many
// connections. On the default transport, on unix, a plain http://
// endpoint that no proxy setting covers is spoken to by the provider's own
// HTTP/1.1 client (unless WithNetHTTP), which costs less per SSE event
// than net/http, sends the same bytes and keeps the same connection
// bounds; an answer head it does not read itself (a redirect, an unknown
// transfer encoding, an unusual header) is read by net/http's parser from
// the same connection, so the server sees every request once. The
// provider's own clients do not follow redirects: a 3xx fails the request
// as http_3xx, naming where it pointed (a followed redirect would time two
// requests as one; give the final URL as the base URL).
func WithHTTPClient(c *http.Client) Option {
	return allProviders("WithHTTPClient", func(o *LLMProvider) { o.client = c })
}

// WithNetHTTP makes the provider's default transport speak net/http for
// every request, never its own HTTP/1.1 client (see WithHTTPClient); the
// own client costs less CPU per event. Which client measured a run is in
// Description.Client and disclosure box 1.
//
// Both send the same request bytes (Accept-Encoding: identity unless
// WithHeader sets one: a compressing layer buffers a compressed answer
// before it sends anything, so asking for gzip, as net/http does by
// default, would time that buffer rather than the server's stream; a
// gzip or deflate answer is decoded all the same, and one in another
// encoding fails as bad_stream), resend a request only when no byte of
// it was written, and time alike: TTFB at the socket read that brought
// the answer's head (after 1xx answers, the read that completed the
// final head), each event at the socket read that brought its last
// bytes, for http:// and, under TLS, https://. A client of your own
// (WithHTTPClient) is timed when its body reads return.
func WithNetHTTP() Option {
	return llmOnly("WithNetHTTP", func(o *LLMProvider) { o.noFastPath = true })
}

// WithAPIKey sets the bearer token, sent in the Authorization header. The
// key never appears in a record, a log line, an error or an artifact: it
// is never printed, and wherever a server echoes it (in an error body, the
// model name, the answer, even split across chunks) it is replaced by
// "[redacted]". So are the values of WithHeader and of the base URL's
// query parameters. Values shorter than 8 bytes are not searched for (a
// header value "1" cannot be told from a digit of a number; no real
// credential is that short), though they are never printed either.
func WithAPIKey(key string) Option {
	return allProviders("WithAPIKey", func(o *LLMProvider) { o.key = key })
}

// defaultModel is the model ID requested unless WithModel names another:
// the fake provider's.
const defaultModel = "fake-model"

// WithModel sets the model ID requested. Default (and for ""):
// "fake-model", the fake provider's.
func WithModel(model string) Option {
	return llmOnly("WithModel", func(o *LLMProvider) {
		o.model = model
		if model == "" {
			o.model = defaultModel
		}
	})
}

// WithHeader adds a header to every request (e.g. an organisation ID). Its
// value is treated as a secret, as the API key is (see WithAPIKey).
func WithHeader(key, value string) Option {
	return allProviders("WithHeader", func(o *LLMProvider) { o.header.Add(key, value) })
}

// WithoutStreamOptions never sends stream_options (by default every request
// asks for usage with stream_options.include_usage). Without it most
// servers send no usage, and decode rates count token events (see
// Record.DecodeRate). A server that refuses stream_options is handled
// without it: see OpenAI.
func WithoutStreamOptions() Option {
	return &providerOption{name: "WithoutStreamOptions", scope: usageScope, set: func(o *LLMProvider) { o.noStreamOptions.Store(true) }}
}

// OpenAI returns a Provider that streams chat completions from an
// OpenAI-compatible endpoint: baseURL is the API root ("https://host/v1");
// requests go to baseURL + "/chat/completions" with stream true and
// stream_options.include_usage. It panics if baseURL is not an http(s) URL.
//
// Some servers refuse stream_options (Mistral's API with 422
// extra_forbidden, Azure OpenAI api-versions before 2024-09-01-preview
// with 400 unknown_parameter). The first answer of status 400 or 422 whose
// body names stream_options turns it off for this provider from then on,
// and that request is sent once more without it: its record times the
// resent request only, and carries a note saying why and how long the
// refused one took; the run's disclosure counts such requests. Requests
// in flight when the refusal came are each resent the same way, once.
// WithoutStreamOptions never sends it.
//
// WithoutStreaming asks for whole chat.completion answers instead (stream
// false, no stream_options) and times them as that option describes.
func OpenAI(baseURL string, opts ...Option) *LLMProvider {
	return NewLLM(baseURL, protocol.Chat, opts...)
}

// NewLLM returns a Provider that speaks protocol p to the API root
// baseURL ("https://host/v1"): requests go to baseURL + p.Path(model)
// (p.WholePath(model) with WithoutStreaming, when p has one), the path
// computed once every option ran, with p's body, headers and
// key header, and are measured as OpenAI describes, through p's decoder
// (a stream) or p.Whole (WithoutStreaming). OpenAI, Responses and
// Anthropic are NewLLM with protocol.Chat, protocol.Responses and
// protocol.Messages. It panics if baseURL is not an http(s) URL, if p
// lacks a field it needs (see protocol.Protocol.Valid), or if an option
// does not apply (see Option).
func NewLLM(baseURL string, p *protocol.Protocol, opts ...Option) *LLMProvider {
	if p == nil {
		panic("latencytest: NewLLM without a protocol")
	}
	if why := p.Valid(); why != "" {
		panic("latencytest: NewLLM: " + why)
	}
	title := cmp.Or(p.Title, string(p.Name))
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		panic(fmt.Sprintf("latencytest: %s base URL %s is not an http(s) URL", title, shownURL(baseURL)))
	}
	o := &LLMProvider{model: defaultModel, header: http.Header{}, api: p}
	apply(o, title, opts)
	// The path from the model, after the options. The escaped path: a
	// %2F in the base URL stays %2F. A query (api-version=…) stays.
	// A query in the protocol's path (Gemini's "?alt=sse") joins the base
	// URL's.
	pathOf := p.Path
	if o.noStream && p.WholePath != nil {
		pathOf = p.WholePath
	}
	path, query, _ := strings.Cut(pathOf(o.model), "?")
	escaped := strings.TrimRight(u.EscapedPath(), "/") + path
	unescaped, err := url.PathUnescape(escaped)
	if err != nil {
		panic(fmt.Sprintf("latencytest: %s path %q is not a valid escaped path", title, path))
	}
	u.Path, u.RawPath = unescaped, escaped
	if query != "" {
		u.RawQuery = strings.TrimPrefix(u.RawQuery+"&"+query, "&")
	}
	o.url = u.String()
	if o.noStream || p.UsageKey == "" {
		o.noStreamOptions.Store(true) // nothing to refuse (see Call)
	}
	var public []string
	if p.Header != nil {
		public = p.Header(o.header)
	}
	if o.client == nil {
		o.client = &http.Client{Transport: o.transport(), CheckRedirect: noRedirects}
		o.ownTransport = true
		if !o.noFastPath && h1.Supported {
			o.h1req, _ = h1.NewRequest(u, o.header, func(h http.Header) { o.setHeaders(h, "") })
		}
	}
	o.endpoint = redact.URL(o.url)
	o.secrets = withoutPublic(secretsOf(o.key, o.header, u), public)
	if p.Signer != nil && o.key == "" {
		sg, err := p.Signer(u)
		if err != nil {
			panic(fmt.Sprintf("latencytest: %s: %v", title, err))
		}
		o.setSigning(sg, u)
	}
	return o
}

// withoutPublic drops the values public names from a secrets list.
func withoutPublic(secrets, public []string) []string {
	return slices.DeleteFunc(secrets, func(s string) bool { return slices.Contains(public, s) })
}

// OpenAIFromEnv returns the OpenAI provider for OPENAI_BASE_URL,
// OPENAI_API_KEY and OPENAI_MODEL. The error names the variables that are
// unset. The key must be set but may be empty (for a local server without
// keys); the others must not be empty.
func OpenAIFromEnv(opts ...Option) (*LLMProvider, error) {
	return llmFromEnv(protocol.Chat, opts)
}

// llmFromEnv returns the provider of protocol p for its environment
// variables (protocol.Protocol.Env), its base URL completed by p.BaseURL.
func llmFromEnv(p *protocol.Protocol, opts []Option) (*LLMProvider, error) {
	base, u, key, model, err := fromEnv(p.Env)
	if err != nil {
		return nil, err
	}
	if p.BaseURL != nil {
		p.BaseURL(u)
		base = u.String()
	}
	return NewLLM(base, p, append([]Option{WithModel(model), WithAPIKey(key)}, opts...)...), nil
}

// fromEnv reads a provider's base URL, key and model variables: the error
// names the variables that are unset (the key must be set but may be
// empty, for a local server without keys; the others must not be empty),
// or a base URL that is not http(s) (shown without its credentials).
func fromEnv(env protocol.Env) (base string, u *url.URL, key, model string, err error) {
	baseVar, keyVar, modelVar := env.BaseURL, env.KeyVar(), env.Model
	base, model = env.Base(), os.Getenv(modelVar)
	key, hasKey := os.LookupEnv(keyVar)
	var missing []string
	if base == "" {
		missing = append(missing, baseVar)
	}
	if !hasKey {
		missing = append(missing, strings.TrimSuffix(keyVar+" or "+env.AltAPIKey, " or ")+" (set it empty for a server without keys)")
	}
	if model == "" {
		missing = append(missing, modelVar)
	}
	if len(missing) > 0 {
		return "", nil, "", "", fmt.Errorf("latencytest: %s not set", strings.Join(missing, ", "))
	}
	u, err = url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", nil, "", "", fmt.Errorf("latencytest: %s=%s is not an http(s) URL", baseVar, shownURL(base))
	}
	return base, u, key, model, nil
}

// readBuffers holds the 32 KiB buffers calls read their bodies through.
var readBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// Causes of a call's end, told apart after the fact.
var (
	errFirstTokenTimeout = errors.New("no token before the first-token timeout")
	errTotalTimeout      = errors.New("not done before the total timeout")
)

// streamOptionsNote begins the note of a request resent without
// stream_options (see OpenAI); the disclosure counts the records that
// carry it.
const streamOptionsNote = "resent without stream_options: the server refused it"

// requestBuffers holds the buffers the fast path writes requests from.
var requestBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// doneGrace is how long a call waits, after [DONE], for the end of the
// body, and doneDrain how many bytes it reads: a body read to its end
// returns its connection to the pool, while a body closed early closes
// it, and the next request would pay for a new connection inside its
// TTFT. Both are generous (a loaded server may send the body's end well
// after [DONE]). The record is final before: a server that holds the
// connection open costs the call up to doneGrace, never measured time,
// and its connection is closed (the disclosure counts the new ones).
const (
	doneGrace = 2 * time.Second
	doneDrain = 4 << 20
)

var errDrained = errors.New("the body did not end within the grace after [DONE]")

// drain reads what follows [DONE] (the chunked body's end, most often
// already received) and discards it, for at most doneGrace and doneDrain
// bytes; then the body's end is reached or the request is canceled. The
// grace is waited on the run's deadline watcher when ctx carries one.
func drain(ctx context.Context, body io.Reader, buf []byte, cancel context.CancelCauseFunc) {
	t := afterFunc(ctx, doneGrace, func() { cancel(errDrained) })
	defer t.Stop()
	for n := 0; n < doneDrain; {
		k, err := body.Read(buf)
		if err != nil {
			return
		}
		n += k
	}
}

// errorMessage extracts the error message from a JSON error body (see
// protocol.ErrorText), or gives the first 200 bytes of the body.
func errorMessage(b []byte) string {
	if msg, ok := protocol.ErrorText(b); ok {
		return msg
	}
	return truncate(strings.TrimSpace(string(b)), 200)
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut
// with "…".
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
