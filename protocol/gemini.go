package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// Gemini is Google's Gemini API (generativelanguage): POST
// {base}/models/{model}:streamGenerateContent?alt=sse, or
// {base}/models/{model}:generateContent for a whole answer; the key in
// x-goog-api-key. The messages are "contents" of role user or model
// (assistant messages are the model's), system and developer messages
// the systemInstruction, the cap and temperature in generationConfig.
// A stream has no closing event: it ends well when its last chunk gave
// candidate 0 a finishReason (or the prompt was blocked), and is
// truncated without one. A base URL from the environment is taken as
// Google's SDKs take it, without the version: "/v1beta" is added unless
// its path ends in a version.
//
// Its decoder reads candidate 0's parts: text is the answer, text with
// "thought": true is reasoning (never the answer), a functionCall part a
// tool call whose name and arguments arrive whole. usageMetadata gives
// the counts: prompt promptTokenCount, completion candidatesTokenCount
// plus thoughtsTokenCount (reasoning included, as CompletionTokens is),
// cached cachedContentTokenCount, reasoning thoughtsTokenCount. A
// finishReason that names a safety or policy stop (SAFETY, RECITATION,
// BLOCKLIST, PROHIBITED_CONTENT, SPII, the IMAGE_ ones, MODEL_ARMOR) and
// a promptFeedback.blockReason are reported as the finish reason
// "content_filter", with a note that names Gemini's; the others (STOP,
// MAX_TOKENS, MALFORMED_FUNCTION_CALL…) as they are. An error object in
// the stream fails it.
var Gemini = &Protocol{
	Name: NameGemini, Title: "Gemini", Kind: "gemini-generate-content",
	Path:      func(model string) string { return geminiModelPath(model) + ":streamGenerateContent?alt=sse" },
	WholePath: func(model string) string { return geminiModelPath(model) + ":generateContent" },
	Body:      geminiBody,
	Auth:      func(h http.Header, key string) { h.Set("X-Goog-Api-Key", key) },
	Env: Env{BaseURL: "GOOGLE_GEMINI_BASE_URL", APIKey: "GEMINI_API_KEY", Model: "GEMINI_MODEL",
		AltAPIKey: "GOOGLE_API_KEY", DefaultBaseURL: "https://generativelanguage.googleapis.com"},
	BaseURL: func(u *url.URL) {
		p := strings.TrimRight(u.Path, "/")
		if i := strings.LastIndexByte(p, '/'); i < 0 || !geminiVersion(p[i+1:]) {
			u.Path, u.RawPath = p+"/v1beta", ""
		}
	},
	NewDecoder:    func() Decoder { return &geminiDecoder{} },
	Terminal:      "a chunk with a finishReason",
	Whole:         geminiWhole,
	Answer:        "a Gemini GenerateContentResponse",
	IsAnswer:      geminiIsAnswer,
	MatchPath:     func(p string) bool { return pathEnds(p, ":streamGenerateContent", ":generateContent") },
	MatchEvent:    func(typ string, data []byte) bool { return (typ == "" || typ == "message") && geminiIsAnswer(data) },
	ErrorText:     geminiErrorText,
	EndOfSequence: func(r string) bool { return r == "STOP" },
}

// geminiVersion reports whether a path segment is an API version: v1,
// v1beta, v1alpha, v2…
func geminiVersion(seg string) bool {
	return len(seg) >= 2 && seg[0] == 'v' && seg[1] >= '0' && seg[1] <= '9'
}

// geminiModelPath is the path of a model: "/models/{model}", or the
// model's own resource name when it is one ("models/x", "tunedModels/x").
func geminiModelPath(model string) string {
	for _, prefix := range []string{"models/", "tunedModels/"} {
		if rest, ok := strings.CutPrefix(model, prefix); ok {
			return "/" + prefix + url.PathEscape(rest)
		}
	}
	return "/models/" + url.PathEscape(model)
}

// geminiFilters are the finish and block reasons of a safety or policy
// stop: the content_filter class.
var geminiFilters = map[string]bool{
	"SAFETY": true, "RECITATION": true, "BLOCKLIST": true, "PROHIBITED_CONTENT": true, "SPII": true,
	"IMAGE_SAFETY": true, "IMAGE_PROHIBITED_CONTENT": true, "IMAGE_RECITATION": true,
	"MODEL_ARMOR": true, "JAILBREAK": true,
}

// geminiPart is one part of a Gemini content.
type geminiPart struct {
	Text string `json:"text"`
}

// geminiContent is a Gemini content: a role and its parts.
type geminiContent struct {
	Role  string       `json:"role,omitempty"`
	Parts []geminiPart `json:"parts"`
}

// geminiBody encodes a generateContent request (the model is in the
// path; the path decides whether it streams).
func geminiBody(r Request) ([]byte, error) {
	type config struct {
		MaxOutputTokens int      `json:"maxOutputTokens,omitempty"`
		Temperature     *float64 `json:"temperature,omitempty"`
	}
	body := struct {
		Contents          []geminiContent `json:"contents"`
		SystemInstruction *geminiContent  `json:"systemInstruction,omitempty"`
		GenerationConfig  *config         `json:"generationConfig,omitempty"`
	}{Contents: []geminiContent{}}
	var system []geminiPart
	for _, m := range r.Messages {
		switch m.Role {
		case "system", "developer":
			system = append(system, geminiPart{m.Content})
			continue
		case "assistant", "model":
			body.Contents = append(body.Contents, geminiContent{"model", []geminiPart{{m.Content}}})
		default:
			body.Contents = append(body.Contents, geminiContent{"user", []geminiPart{{m.Content}}})
		}
	}
	if system != nil {
		body.SystemInstruction = &geminiContent{Parts: system}
	}
	if r.MaxTokens > 0 || r.Temperature != nil {
		body.GenerationConfig = &config{MaxOutputTokens: max(r.MaxTokens, 0), Temperature: r.Temperature}
	}
	return json.Marshal(body)
}

// geminiDecoder decodes a Gemini SSE stream of GenerateContentResponse
// chunks.
type geminiDecoder struct {
	ended  bool // candidate 0 finished, or the prompt was blocked
	others bool // a candidate other than 0 was seen
}

// rawGeminiChunk is a GenerateContentResponse decoded field by field.
type rawGeminiChunk struct {
	Candidates     json.RawMessage `json:"candidates"`
	PromptFeedback json.RawMessage `json:"promptFeedback"`
	UsageMetadata  json.RawMessage `json:"usageMetadata"`
	ModelVersion   json.RawMessage `json:"modelVersion"`
	Error          json.RawMessage `json:"error"`
}

type rawGeminiCandidate struct {
	Index        json.RawMessage `json:"index"`
	Content      json.RawMessage `json:"content"`
	FinishReason json.RawMessage `json:"finishReason"`
}

type rawGeminiPart struct {
	Text                json.RawMessage `json:"text"`
	Thought             json.RawMessage `json:"thought"`
	FunctionCall        json.RawMessage `json:"functionCall"`
	ExecutableCode      json.RawMessage `json:"executableCode"`
	CodeExecutionResult json.RawMessage `json:"codeExecutionResult"`
}

func (d *geminiDecoder) Event(s Sink, typ string, data []byte) (token bool) {
	if typ == "error" {
		s.Fail("error event: " + geminiEventError(data))
		return false
	}
	var c rawGeminiChunk
	if err := json.Unmarshal(data, &c); err != nil {
		s.Fail("malformed event: " + err.Error())
		return false
	}
	if d.ended {
		s.Note("a chunk after the finishReason ignored")
		return false
	}
	return d.chunk(s, &c)
}

// chunk applies one GenerateContentResponse and reports whether it
// carried a token.
func (d *geminiDecoder) chunk(s Sink, c *rawGeminiChunk) (token bool) {
	if !absent(c.Error) {
		s.Fail("error event: " + geminiErrorObject(c.Error))
		return false
	}
	if model := str(s, "modelVersion", c.ModelVersion); model != "" {
		s.Model(model)
	}
	geminiUsage(s, c.UsageMetadata)
	var fb struct {
		BlockReason json.RawMessage `json:"blockReason"`
	}
	if decodeObject(s, "promptFeedback", c.PromptFeedback, &fb) {
		if r := str(s, "promptFeedback.blockReason", fb.BlockReason); r != "" && r != "BLOCK_REASON_UNSPECIFIED" {
			note(s, "promptFeedback.blockReason %s: the prompt was blocked", truncate(r, 40))
			s.Finish("content_filter")
			d.ended = true
		}
	}
	if absent(c.Candidates) {
		return false
	}
	var cands []json.RawMessage
	if json.Unmarshal(c.Candidates, &cands) != nil {
		note(s, "candidates ignored: not an array (%s)", truncate(string(c.Candidates), 40))
		return false
	}
	for _, raw := range cands {
		var cand rawGeminiCandidate
		if json.Unmarshal(raw, &cand) != nil {
			note(s, "a candidate ignored: not an object (%s)", truncate(string(raw), 40))
			continue
		}
		if i, ok := count(s, "candidate index", cand.Index); ok && i != 0 {
			d.others = true
			continue
		}
		if d.content(s, cand.Content) {
			token = true
		}
		if r := str(s, "finishReason", cand.FinishReason); r != "" && r != "FINISH_REASON_UNSPECIFIED" {
			if geminiFilters[r] {
				note(s, "finishReason %s: a safety or policy stop", truncate(r, 40))
				r = "content_filter"
			}
			s.Finish(r)
			d.ended = true
		}
	}
	return token
}

// content applies candidate 0's content: its parts in order.
func (d *geminiDecoder) content(s Sink, raw json.RawMessage) (token bool) {
	var ct struct {
		Parts json.RawMessage `json:"parts"`
	}
	if !decodeObject(s, "content", raw, &ct) || absent(ct.Parts) {
		return false
	}
	var parts []json.RawMessage
	if json.Unmarshal(ct.Parts, &parts) != nil {
		note(s, "content.parts ignored: not an array (%s)", truncate(string(ct.Parts), 40))
		return false
	}
	for _, rp := range parts {
		var p rawGeminiPart
		if json.Unmarshal(rp, &p) != nil {
			note(s, "a part ignored: not an object (%s)", truncate(string(rp), 40))
			continue
		}
		text := str(s, "part.text", p.Text)
		switch {
		case string(p.Thought) == "true":
			if text != "" {
				token = true // reasoning: a token, never the answer
			}
		case !absent(p.FunctionCall):
			var fc struct {
				Name json.RawMessage `json:"name"`
				Args json.RawMessage `json:"args"`
			}
			if json.Unmarshal(p.FunctionCall, &fc) != nil {
				s.Fail("functionCall is not an object: " + truncate(string(p.FunctionCall), 80))
				return token
			}
			if !absent(fc.Args) && !bytes.HasPrefix(bytes.TrimSpace(fc.Args), []byte("{")) {
				s.Fail("functionCall " + truncate(str(s, "functionCall.name", fc.Name), 40) + ": its args are not an object: " + truncate(string(fc.Args), 80))
				return token
			}
			n := s.ToolCall()
			if str(s, "functionCall.name", fc.Name) != "" {
				s.ToolName(n)
			}
			s.ToolArgs(n) // the arguments arrive whole, with the name
			token = true
		case !absent(p.ExecutableCode) || !absent(p.CodeExecutionResult):
			token = true // code the API runs itself: generated, not the answer
		case text != "":
			s.Answer(text)
			token = true
		}
	}
	return token
}

// End ends a stream whose last chunk finished candidate 0 (or blocked
// the prompt): without one it is truncated.
func (d *geminiDecoder) End(s Sink) {
	if d.others {
		s.Note("candidates other than index 0 ignored (candidateCount > 1): only the first is measured")
	}
	if d.ended {
		s.Done()
	}
}

// geminiUsage takes the counts of a usageMetadata object (each chunk's
// is the answer's so far: the last one wins).
func geminiUsage(s Sink, raw json.RawMessage) {
	var u struct {
		Prompt     json.RawMessage `json:"promptTokenCount"`
		Candidates json.RawMessage `json:"candidatesTokenCount"`
		Thoughts   json.RawMessage `json:"thoughtsTokenCount"`
		Cached     json.RawMessage `json:"cachedContentTokenCount"`
	}
	if !decodeObject(s, "usageMetadata", raw, &u) {
		return
	}
	if n, ok := count(s, "usageMetadata.promptTokenCount", u.Prompt); ok {
		s.Count(PromptTokens, n)
	}
	if n, ok := count(s, "usageMetadata.cachedContentTokenCount", u.Cached); ok {
		s.Count(CachedTokens, n)
	}
	cand, okC := count(s, "usageMetadata.candidatesTokenCount", u.Candidates)
	thoughts, okT := count(s, "usageMetadata.thoughtsTokenCount", u.Thoughts)
	if okT {
		s.Count(ReasoningTokens, thoughts)
	}
	if okC || okT {
		s.Count(CompletionTokens, min(cand+thoughts, maxCount))
	}
}

// geminiIsAnswer reports whether a body is a GenerateContentResponse: a
// JSON object with candidates or promptFeedback, or usageMetadata with
// modelVersion.
func geminiIsAnswer(body []byte) bool {
	var c rawGeminiChunk
	return json.Unmarshal(body, &c) == nil &&
		(!absent(c.Candidates) || !absent(c.PromptFeedback) || !absent(c.UsageMetadata) && !absent(c.ModelVersion))
}

// geminiWhole decodes a whole answer: one GenerateContentResponse, or
// the JSON array of them that streamGenerateContent sends without
// alt=sse, read in order.
func geminiWhole(s Sink, body []byte) error {
	var chunks []json.RawMessage
	if t := bytes.TrimSpace(body); len(t) > 0 && t[0] == '[' {
		if err := json.Unmarshal(t, &chunks); err != nil {
			return errors.New("the answer is not a JSON array of GenerateContentResponse objects: " + err.Error())
		}
	} else {
		chunks = []json.RawMessage{body}
	}
	d := &geminiDecoder{}
	for _, raw := range chunks {
		var c rawGeminiChunk
		if err := json.Unmarshal(raw, &c); err != nil {
			return errors.New("the answer is not a GenerateContentResponse: " + err.Error())
		}
		if !absent(c.Error) {
			return errors.New("error object in a 2xx answer: " + geminiErrorObject(c.Error))
		}
		if !geminiIsAnswer(raw) {
			return errors.New("the answer is not a GenerateContentResponse (no candidates, promptFeedback or usageMetadata): " + truncate(string(raw), 120))
		}
		d.chunk(s, &c)
	}
	if d.others {
		s.Note("candidates other than index 0 ignored (candidateCount > 1): only the first is measured")
	}
	return nil
}

// geminiErrorText extracts the message of a Google API error body,
// {"error": {"code", "status", "message"}} (or an array holding one, as
// a stream without alt=sse fails): "RESOURCE_EXHAUSTED: Quota
// exceeded"; other bodies as ErrorText reads them.
func geminiErrorText(b []byte) (string, bool) {
	var arr []json.RawMessage
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '[' && json.Unmarshal(t, &arr) == nil && len(arr) > 0 {
		b = arr[0]
	}
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(b, &e) == nil && !absent(e.Error) {
		return geminiErrorObject(e.Error), true
	}
	return ErrorText(b)
}

// geminiErrorObject renders a Google API error object: its status and
// message, or as errorText renders it.
func geminiErrorObject(raw json.RawMessage) string {
	var e struct {
		Status  string `json:"status"`
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Message != "" && e.Status != "" {
		return truncate(e.Status+": "+e.Message, 200)
	}
	return errorText(raw)
}

// geminiEventError is the message of an SSE error event's data.
func geminiEventError(data []byte) string {
	if msg, ok := geminiErrorText(data); ok {
		return msg
	}
	return truncate(strings.TrimSpace(string(data)), 200)
}
