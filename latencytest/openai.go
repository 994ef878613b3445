package latencytest

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
)

// Option configures the OpenAI provider.
type Option func(*openAI)

// WithHTTPClient sets the HTTP client (e.g. a fake provider's in-memory
// client). Default: a client with its own transport.
func WithHTTPClient(c *http.Client) Option { return func(o *openAI) { o.client = c } }

// WithAPIKey sets the bearer token. It is sent in the Authorization header
// only and never appears in a record, a log line, an error or an artifact.
func WithAPIKey(key string) Option { return func(o *openAI) { o.key = key } }

// WithModel sets the model ID requested. Default "fake-model".
func WithModel(model string) Option { return func(o *openAI) { o.model = model } }

// WithHeader adds a header to every request (e.g. an organisation ID).
func WithHeader(key, value string) Option {
	return func(o *openAI) { o.header.Add(key, value) }
}

// OpenAI returns a Provider that streams chat completions from an
// OpenAI-compatible endpoint: baseURL is the API root ("https://host/v1");
// requests go to baseURL + "/chat/completions" with stream true and
// stream_options.include_usage. It panics if baseURL is not an http(s) URL.
func OpenAI(baseURL string, opts ...Option) Provider {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		panic(fmt.Sprintf("latencytest: OpenAI base URL %q is not an http(s) URL", redactURL(baseURL)))
	}
	u.Path = strings.TrimRight(u.Path, "/") + "/chat/completions" // a query (api-version=…) stays
	u.RawPath = ""
	o := &openAI{url: u.String(), model: "fake-model", header: http.Header{}}
	for _, opt := range opts {
		opt(o)
	}
	if o.client == nil {
		o.client = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	o.endpoint = redactURL(o.url)
	return o
}

// Environment variables read by OpenAIFromEnv.
const (
	EnvBaseURL = "OPENAI_BASE_URL"
	EnvAPIKey  = "OPENAI_API_KEY"
	EnvModel   = "OPENAI_MODEL"
)

// OpenAIFromEnv returns the OpenAI provider for OPENAI_BASE_URL,
// OPENAI_API_KEY and OPENAI_MODEL. The error names the variables that are
// unset. The key must be set but may be empty (for a local server without
// keys); the others must not be empty.
func OpenAIFromEnv(opts ...Option) (Provider, error) {
	base, model := os.Getenv(EnvBaseURL), os.Getenv(EnvModel)
	key, hasKey := os.LookupEnv(EnvAPIKey)
	var missing []string
	if base == "" {
		missing = append(missing, EnvBaseURL)
	}
	if !hasKey {
		missing = append(missing, EnvAPIKey+" (set it empty for a server without keys)")
	}
	if model == "" {
		missing = append(missing, EnvModel)
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("latencytest: %s not set", strings.Join(missing, ", "))
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("latencytest: %s=%q is not an http(s) URL", EnvBaseURL, redactURL(base))
	}
	all := append([]Option{WithModel(model), WithAPIKey(key)}, opts...)
	return OpenAI(base, all...), nil
}

type openAI struct {
	url, endpoint string
	client        *http.Client
	key, model    string
	header        http.Header
}

// Describe names the endpoint and model (never the key).
func (o *openAI) Describe() Description {
	return Description{Kind: "openai-chat-completions (streaming)", Endpoint: o.endpoint, Model: o.model}
}

// Causes of a call's end, told apart after the fact.
var (
	errFirstTokenTimeout = errors.New("no token before the first-token timeout")
	errTotalTimeout      = errors.New("not done before the total timeout")
)

type chatChunk struct {
	Model   string `json:"model"`
	Choices []struct {
		Delta struct {
			Content          *string `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
			Reasoning        *string `json:"reasoning"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		PromptTokensDetails *struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
		CompletionTokensDetails *struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		} `json:"completion_tokens_details"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
	} `json:"error"`
}

// Call streams one chat completion and measures it.
func (o *openAI) Call(parent context.Context, req Request) Record {
	rec := Record{ID: req.ID, MaxTokens: req.MaxTokens, TTFB: NotObserved, TTFT: NotObserved,
		FirstAnswer: NotObserved, LastToken: NotObserved, Model: o.model}
	body := map[string]any{
		"model":          o.model,
		"messages":       req.Messages,
		"stream":         true,
		"stream_options": map[string]bool{"include_usage": true},
	}
	if req.MaxTokens > 0 {
		body["max_tokens"] = req.MaxTokens
	}
	if req.Temperature != nil {
		body["temperature"] = *req.Temperature
	}
	payload, err := json.Marshal(body)
	if err != nil {
		rec.Err, rec.Detail = ClassTransport, "encoding the request: "+err.Error()
		return rec
	}

	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	start := time.Now()
	rec.Start = start
	total := time.AfterFunc(req.limit(), func() { cancel(errTotalTimeout) })
	defer total.Stop()
	var first *time.Timer
	if req.FirstTokenTimeout > 0 {
		first = time.AfterFunc(req.FirstTokenTimeout, func() { cancel(errFirstTokenTimeout) })
		defer first.Stop()
	}

	// Trace callbacks may run on the transport's goroutines (a dial that
	// loses a race can even finish after Do returns): they write under mu.
	var mu sync.Mutex
	var dnsStart, connStart, tlsStart time.Time
	var dns, conn, tlsd, ttfb time.Duration = 0, 0, 0, NotObserved
	at := func(f func()) { mu.Lock(); f(); mu.Unlock() }
	trace := &httptrace.ClientTrace{
		DNSStart:             func(httptrace.DNSStartInfo) { at(func() { dnsStart = time.Now() }) },
		DNSDone:              func(httptrace.DNSDoneInfo) { at(func() { dns = time.Since(dnsStart) }) },
		ConnectStart:         func(string, string) { at(func() { connStart = time.Now() }) },
		ConnectDone:          func(string, string, error) { at(func() { conn = time.Since(connStart) }) },
		TLSHandshakeStart:    func() { at(func() { tlsStart = time.Now() }) },
		TLSHandshakeDone:     func(tls.ConnectionState, error) { at(func() { tlsd = time.Since(tlsStart) }) },
		GotFirstResponseByte: func() { at(func() { ttfb = time.Since(start) }) },
	}
	setup := func() {
		mu.Lock()
		rec.DNS, rec.Connect, rec.TLS, rec.TTFB = dns, conn, tlsd, ttfb
		mu.Unlock()
	}
	hreq, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodPost, o.url, bytes.NewReader(payload))
	if err != nil {
		rec.Err, rec.Detail = ClassTransport, o.redact(err.Error())
		return rec
	}
	for k, vs := range o.header {
		hreq.Header[k] = vs
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	hreq.Header.Set("X-Request-ID", req.ID)
	if o.key != "" {
		hreq.Header.Set("Authorization", "Bearer "+o.key)
	}

	fail := func(class, detail string) Record {
		rec.Total = time.Since(start)
		if rec.Err == "" {
			rec.Err, rec.Detail = class, o.redact(detail)
		}
		if rec.LastToken >= 0 {
			rec.MaxGap = max(rec.MaxGap, rec.Total-rec.LastToken)
		}
		return rec
	}
	// ended classifies a failure by what ended the call.
	ended := func(err error) Record {
		switch cause := context.Cause(ctx); {
		case errors.Is(cause, errFirstTokenTimeout):
			return fail(ClassFirstTokenTimeout, fmt.Sprintf("no token within %v", req.FirstTokenTimeout))
		case errors.Is(cause, errTotalTimeout):
			return fail(ClassTotalTimeout, fmt.Sprintf("not done within %v", req.limit()))
		case parent.Err() != nil:
			return fail(ClassCanceled, "the run ended: "+context.Cause(parent).Error())
		case errors.Is(err, io.ErrUnexpectedEOF):
			return fail(ClassTruncated, "the connection closed mid-stream")
		}
		// net/http names the URL, query included (where some APIs carry a
		// key): name the redacted endpoint instead.
		var ue *url.Error
		if errors.As(err, &ue) {
			return fail(ClassTransport, ue.Op+" "+o.endpoint+": "+ue.Err.Error())
		}
		return fail(ClassTransport, err.Error())
	}

	resp, err := o.client.Do(hreq)
	setup()
	if err != nil {
		return ended(err)
	}
	defer resp.Body.Close()
	rec.Status = resp.StatusCode
	rec.Injected = resp.Header.Get("X-Fake-Injected")
	if rec.TTFB < 0 {
		rec.TTFB = time.Since(start) // transports without httptrace (in-memory)
	}
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return fail(HTTPClass(resp.StatusCode), errorMessage(b))
	}

	var (
		parser   sseParser
		sawDone  bool
		content  strings.Builder
		badEvent string
		buf      = make([]byte, 32<<10)
		now      time.Duration
	)
	onEvent := func(ev Event) {
		if ev.Data == "[DONE]" {
			sawDone = true
			return
		}
		var ch chatChunk
		if err := json.Unmarshal([]byte(ev.Data), &ch); err != nil {
			if badEvent == "" {
				badEvent = "malformed event: " + err.Error()
			}
			return
		}
		if ch.Error != nil {
			if badEvent == "" {
				badEvent = "error event: " + ch.Error.Message
			}
			return
		}
		if ch.Model != "" {
			rec.Model = ch.Model
		}
		if u := ch.Usage; u != nil {
			rec.PromptTokens, rec.CompletionTokens = u.PromptTokens, u.CompletionTokens
			if u.PromptTokensDetails != nil {
				rec.CachedTokens = u.PromptTokensDetails.CachedTokens
			}
			if u.CompletionTokensDetails != nil {
				rec.ReasoningTokens = u.CompletionTokensDetails.ReasoningTokens
			}
		}
		token := false
		for _, c := range ch.Choices {
			d := c.Delta
			if d.Content != nil && *d.Content != "" {
				token = true
				content.WriteString(*d.Content)
				if rec.FirstAnswer < 0 {
					rec.FirstAnswer = now
				}
			}
			if (d.ReasoningContent != nil && *d.ReasoningContent != "") || (d.Reasoning != nil && *d.Reasoning != "") {
				token = true
			}
			if c.FinishReason != nil {
				rec.FinishReason = *c.FinishReason
			}
		}
		if !token {
			return // a role-only or usage-only chunk is not a token
		}
		if rec.TTFT < 0 {
			rec.TTFT = now
			if first != nil {
				first.Stop()
			}
		} else {
			gap := now - rec.LastToken
			rec.Gaps.Add(gap)
			rec.MaxGap = max(rec.MaxGap, gap)
		}
		rec.LastToken = now
		rec.TokenEvents++
	}
	for {
		n, err := resp.Body.Read(buf)
		now = time.Since(start)
		if n > 0 {
			if perr := parser.Feed(buf[:n], onEvent); perr != nil {
				rec.Content = strings.Clone(content.String()) // drop the builder's spare capacity
				return fail(ClassBadStream, perr.Error())
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			rec.Content = strings.Clone(content.String()) // drop the builder's spare capacity
			return ended(err)
		}
	}
	rec.Total = time.Since(start)
	rec.Content = strings.Clone(content.String()) // drop the builder's spare capacity
	switch {
	case badEvent != "":
		return fail(ClassBadStream, badEvent)
	case !sawDone:
		return fail(ClassTruncated, "the stream ended without [DONE]")
	case rec.TokenEvents == 0:
		return fail(ClassEmptyStream, "the stream ended without a token")
	case rec.FirstAnswer < 0:
		return fail(ClassEmptyAnswer, fmt.Sprintf("%d token events but no answer content (finish_reason %q)", rec.TokenEvents, rec.FinishReason))
	}
	return rec
}

// errorMessage extracts OpenAI's error message from a body, or a short
// prefix of the body.
func errorMessage(b []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &e) == nil && e.Error.Message != "" {
		if e.Error.Type != "" {
			return e.Error.Type + ": " + e.Error.Message
		}
		return e.Error.Message
	}
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// redact removes the API key from a message.
func (o *openAI) redact(s string) string {
	if o.key != "" {
		s = strings.ReplaceAll(s, o.key, "[redacted]")
	}
	return s
}

// redactURL drops credentials and the query from a URL for display.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable URL)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}
