// Package customprotocol defines a wire protocol tailguard does not ship,
// in user code, and measures it: TokenStream, an NDJSON token stream.
// Nothing here imports an internal package of tailguard; copy the
// directory into your own module and it builds and passes.
//
// A protocol is a protocol.Protocol value: its request path (here built
// from the model), body, key header, framing, stream decoder, whole
// answer and error body. latencytest.NewLLM speaks
// it, and every runner and objective works as for the built-in ones.
package customprotocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/tailguard/tailguard/protocol"
)

// TokenStream is the protocol: POST {base}/models/{model}/generate with
// {"prompt", "max_tokens", "stream"} and the key in X-Token. A streamed
// answer is one JSON object a line: {"token": "..."} for answer text,
// {"thinking": "..."} for reasoning, {"error": "..."} for a failure,
// and last {"done": true, "finish": "eos" | "length", "usage": {"in", "out"}}.
// A whole answer is {"text", "finish", "usage"}; an error body is
// {"detail": "..."}.
var TokenStream = &protocol.Protocol{
	Name:  "tokenstream",
	Title: "TokenStream",
	Kind:  "tokenstream-ndjson",
	Path:  func(model string) string { return "/models/" + url.PathEscape(model) + "/generate" },
	Body: func(r protocol.Request) ([]byte, error) {
		var prompt []string
		for _, m := range r.Messages {
			prompt = append(prompt, m.Content)
		}
		return json.Marshal(request{Prompt: strings.Join(prompt, "\n"), MaxTokens: r.MaxTokens, Stream: r.Stream})
	},
	Auth:       func(h http.Header, key string) { h.Set("X-Token", key) },
	Framing:    protocol.Lines,
	NewDecoder: func() protocol.Decoder { return &decoder{} },
	Terminal:   `a line {"done": true}`,
	Whole:      whole,
	Answer:     "a TokenStream answer",
	ErrorText: func(body []byte) (string, bool) {
		var e struct {
			Detail string `json:"detail"`
		}
		return e.Detail, json.Unmarshal(body, &e) == nil && e.Detail != ""
	},
}

// request is the request body.
type request struct {
	Prompt    string `json:"prompt"`
	MaxTokens int    `json:"max_tokens,omitempty"`
	Stream    bool   `json:"stream"`
}

// line is one line of a stream (and, with Text, a whole answer).
type line struct {
	Token    string `json:"token"`
	Thinking string `json:"thinking"`
	Error    string `json:"error"`
	Done     bool   `json:"done"`
	Finish   string `json:"finish"`
	Text     string `json:"text"`
	Usage    *usage `json:"usage"`
}

type usage struct {
	In  int `json:"in"`
	Out int `json:"out"`
}

// decoder decodes one stream: it needs no state across lines.
type decoder struct{}

// Event decodes a line and reports whether it carried a token.
func (decoder) Event(s protocol.Sink, _ string, data []byte) bool {
	var l line
	if err := json.Unmarshal(data, &l); err != nil {
		s.Fail("malformed line: " + err.Error())
		return false
	}
	switch {
	case l.Error != "":
		s.Fail("error line: " + l.Error)
	case l.Done:
		end(s, l)
		s.Done()
	case l.Token != "":
		s.Answer(l.Token)
		return true
	case l.Thinking != "":
		return true
	}
	return false
}

// End has nothing to add.
func (decoder) End(protocol.Sink) {}

// end reports a last line's finish reason and usage. The model's own
// stop, "eos", is reported as "stop", the finish reason whose extra usage
// token decode rates leave out (see protocol.EndsSequence).
func end(s protocol.Sink, l line) {
	if l.Finish == "eos" {
		l.Finish = "stop"
	}
	s.Finish(l.Finish)
	if l.Usage != nil {
		s.Count(protocol.PromptTokens, l.Usage.In)
		s.Count(protocol.CompletionTokens, l.Usage.Out)
	}
}

// whole decodes a whole answer.
func whole(s protocol.Sink, body []byte) error {
	var l line
	if err := json.Unmarshal(body, &l); err != nil {
		return fmt.Errorf("the answer is not a TokenStream answer: %w", err)
	}
	if l.Error != "" {
		return errors.New("error: " + l.Error)
	}
	if l.Text != "" {
		s.Answer(l.Text)
	}
	end(s, l)
	return nil
}
