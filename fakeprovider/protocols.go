package fakeprovider

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/tailguard/tailguard/fakeprovider/internal/wire"
	tgprotocol "github.com/tailguard/tailguard/protocol"
)

// protocol is the API a request speaks: its index in wires. A protocol
// the fake serves is its wire file (internal/wire) and its entry in
// wires; a constant here only for the code that treats it apart.
type protocol uint8

const (
	protoChat      protocol = iota // POST /v1/chat/completions
	protoResponses                 // POST /v1/responses (OpenAI's Responses API)
	protoMessages                  // POST /v1/messages (Anthropic's Messages API)
	protoGemini                    // POST /v1beta/models/{model}:streamGenerateContent (Google's Gemini API)
	protoBedrock                   // POST /model/{modelId}/converse[-stream] (Amazon Bedrock)
)

// Protocol names as they appear in Served.Protocol: package protocol's.
const (
	ProtocolChat      = tgprotocol.NameChat
	ProtocolResponses = tgprotocol.NameResponses
	ProtocolMessages  = tgprotocol.NameMessages
	ProtocolGemini    = tgprotocol.NameGemini
	ProtocolBedrock   = tgprotocol.NameBedrock
)

// name is the protocol's name.
func (p protocol) name() tgprotocol.Name { return wires[p].Name }

// writeError writes e in the protocol's error shape: Anthropic's for
// Messages, Bedrock's for Bedrock, the wire's ErrorBody where it has one,
// OpenAI's otherwise.
func writeError(w http.ResponseWriter, proto protocol, e *apiError) {
	switch proto {
	case protoMessages:
		writeAnthropicError(w, e)
		return
	case protoBedrock:
		writeBedrockError(w, e)
		return
	}
	if body := wires[proto].ErrorBody; body != nil {
		b := body(e.status, e.message)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		w.WriteHeader(e.status)
		_, _ = w.Write(b)
		return
	}
	writeAPIError(w, e)
}

// route returns the protocol whose path this is.
func route(path string) (protocol, bool) {
	for p, w := range wires {
		if w.Match(path) {
			return protocol(p), true
		}
	}
	return 0, false
}

// writeAnthropicError writes Anthropic's error body (see wire.MessagesError).
func writeAnthropicError(w http.ResponseWriter, e *apiError) {
	b := wire.MessagesError(e.status, e.message, w.Header().Get(headerAnthropicRequestID))
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(e.status)
	_, _ = w.Write(b)
}

// headerAnthropicRequestID is the header Anthropic names each attempt by.
const headerAnthropicRequestID = "Request-Id"

// setAnthropicRateLimitHeaders sets Anthropic's anthropic-ratelimit-*
// headers for the fake's fixed quota (the same as OpenAI's: see the
// package doc, # Headers); resets are RFC 3339 instants. retry > 0 marks a
// 429: no request is left until retry has passed, and retry-after says so
// in whole seconds.
func setAnthropicRateLimitHeaders(h http.Header, req parsed, retry time.Duration) {
	now := time.Now().UTC()
	tokens := req.PromptTokens + req.MaxTokens
	remaining, reset := rateLimitRequests-1, time.Minute/rateLimitRequests
	if retry > 0 {
		remaining, reset = 0, retry
		h.Set("Retry-After", strconv.Itoa(max(1, int((retry+time.Second-1)/time.Second))))
	}
	at := func(d time.Duration) string { return now.Add(d).Format(time.RFC3339) }
	h.Set("Anthropic-Ratelimit-Requests-Limit", strconv.Itoa(rateLimitRequests))
	h.Set("Anthropic-Ratelimit-Requests-Remaining", strconv.Itoa(remaining))
	h.Set("Anthropic-Ratelimit-Requests-Reset", at(reset))
	tokenReset := at(time.Duration(min(tokens, rateLimitTokens)) * time.Minute / rateLimitTokens)
	for _, kind := range []struct {
		name string
		used int
	}{{"Tokens", tokens}, {"Input-Tokens", req.PromptTokens}, {"Output-Tokens", req.MaxTokens}} {
		h.Set("Anthropic-Ratelimit-"+kind.name+"-Limit", strconv.Itoa(rateLimitTokens))
		h.Set("Anthropic-Ratelimit-"+kind.name+"-Remaining", strconv.Itoa(max(0, rateLimitTokens-kind.used)))
		h.Set("Anthropic-Ratelimit-"+kind.name+"-Reset", tokenReset)
	}
}

// wires reads each protocol's requests and writes its answers (see
// package wire).
var wires = [...]wire.Protocol{
	protoChat:      wire.Chat,
	protoResponses: wire.Responses,
	protoMessages:  wire.Messages,
	protoGemini:    wire.Gemini,
	protoBedrock:   wire.Bedrock,
}

// errorMessage is the injected error_event's message after sent tokens.
func errorMessage(sent int) string {
	return fmt.Sprintf("fakeprovider: injected error_event: generation failed after %d tokens", sent)
}
