package fakeprovider

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// chunk is one parsed SSE event of a chat-completions stream, with the time
// the client read it.
type chunk struct {
	at     time.Duration // since the request was sent
	raw    string
	done   bool
	parsed struct {
		Choices []struct {
			Delta struct {
				Role             *string `json:"role"`
				Content          *string `json:"content"`
				ReasoningContent *string `json:"reasoning_content"`
			} `json:"delta"`
			FinishReason *string `json:"finish_reason"`
		} `json:"choices"`
		Usage *struct {
			PromptTokens        int `json:"prompt_tokens"`
			CompletionTokens    int `json:"completion_tokens"`
			TotalTokens         int `json:"total_tokens"`
			PromptTokensDetails struct {
				CachedTokens int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
		} `json:"usage"`
	}
	badJSON bool
}

// streamResult is what a test client saw of one request.
type streamResult struct {
	status   int
	header   http.Header
	chunks   []chunk
	body     string // non-SSE body
	readErr  error
	sawDone  bool
	firstTok time.Duration // -1 when none
	lastTok  time.Duration
	content  string
	thinking string
	finish   string
	tokens   int // token events

	// firstAnswer is when the first non-empty delta.content arrived (the
	// first answer token, after any reasoning); -1 when none.
	firstAnswer time.Duration
}

type reqOpts struct {
	id        string
	prompt    string
	maxTokens int
	noStream  bool
	usage     bool
	model     string
}

func chatBody(o reqOpts) string {
	model := o.model
	if model == "" {
		model = "fake-model"
	}
	prompt := o.prompt
	if prompt == "" {
		prompt = "Say something about tails. " + o.id
	}
	m := map[string]any{
		"model":    model,
		"messages": []map[string]string{{"role": "user", "content": prompt}},
		"stream":   !o.noStream,
	}
	if o.usage {
		m["stream_options"] = map[string]bool{"include_usage": true}
	}
	if o.maxTokens > 0 {
		m["max_tokens"] = o.maxTokens
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// do sends one chat request through c and reads the whole answer, timing
// each SSE event on the (possibly fake) clock.
func do(t testing.TB, c *http.Client, base string, o reqOpts) streamResult {
	t.Helper()
	req, err := http.NewRequest("POST", base+"/v1/chat/completions", strings.NewReader(chatBody(o)))
	if err != nil {
		t.Fatal(err)
	}
	if o.id != "" {
		req.Header.Set("X-Request-ID", o.id)
	}
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return streamResult{readErr: err, firstTok: -1, firstAnswer: -1}
	}
	defer resp.Body.Close()
	r := streamResult{status: resp.StatusCode, header: resp.Header, firstTok: -1, firstAnswer: -1}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, err := io.ReadAll(resp.Body)
		r.body, r.readErr = string(b), err
		return r
	}
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			if err != io.EOF {
				r.readErr = err
			}
			return r
		}
		line = strings.TrimRight(line, "\r\n")
		if !strings.HasPrefix(line, "data: ") {
			continue
		}
		ch := chunk{at: time.Since(start), raw: line[6:]}
		if ch.raw == "[DONE]" {
			ch.done = true
			r.sawDone = true
			r.chunks = append(r.chunks, ch)
			continue
		}
		if err := json.Unmarshal([]byte(ch.raw), &ch.parsed); err != nil {
			ch.badJSON = true
		}
		for _, c := range ch.parsed.Choices {
			tok := false
			if c.Delta.Content != nil && *c.Delta.Content != "" {
				r.content += *c.Delta.Content
				tok = true
				if r.firstAnswer < 0 {
					r.firstAnswer = ch.at
				}
			}
			if c.Delta.ReasoningContent != nil && *c.Delta.ReasoningContent != "" {
				r.thinking += *c.Delta.ReasoningContent
				tok = true
			}
			if tok {
				if r.firstTok < 0 {
					r.firstTok = ch.at
				}
				r.lastTok = ch.at
				r.tokens++
			}
			if c.FinishReason != nil {
				r.finish = *c.FinishReason
			}
		}
		r.chunks = append(r.chunks, ch)
	}
}

func (r streamResult) usage() (prompt, completion, cached int, ok bool) {
	for _, c := range r.chunks {
		if u := c.parsed.Usage; u != nil {
			return u.PromptTokens, u.CompletionTokens, u.PromptTokensDetails.CachedTokens, true
		}
	}
	return 0, 0, 0, false
}

func mustNew(t testing.TB, p Profile) *Fake {
	t.Helper()
	f := New(p)
	t.Cleanup(f.Close)
	return f
}

func fmtChunks(cs []chunk) string {
	var b bytes.Buffer
	for _, c := range cs {
		fmt.Fprintf(&b, "%v %s\n", c.at, c.raw)
	}
	return b.String()
}
