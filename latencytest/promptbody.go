package latencytest

import (
	"sync"
	"unicode/utf8"

	"github.com/tailguard/tailguard/internal/defaults"
)

// A Batch's mix prompts are long (up to ~24,000 bytes) and the same for
// every request of a class but for the leading nonce; so are a Chain's
// first calls (its opening prompt) and a replayed trace's arrivals of
// one prompt size. The body of such a request is built once per class
// (and per provider, max_tokens, temperature and stream_options), by the
// provider's own encoder, and each request is a copy of it with its
// nonce written into place: the prompt is JSON-escaped once, not once
// per request, and the bytes sent are those the encoder would write.
// Whatever else (a chain's later calls, whose history grows; a prompt
// size asked once) is encoded in full.

// promptTemplate is one shared prompt text: a request built from it (see
// Batch.request, Chain.runChain, replayPrompts) carries a pointer to it,
// and a provider that finds its message to be the text behind a nonce
// sends a prebuilt body.
type promptTemplate struct {
	text  string
	chars int // text's characters (runes), counted once
}

// newTemplate is text's template.
func newTemplate(text string) *promptTemplate {
	return &promptTemplate{text: text, chars: utf8.RuneCountInString(text)}
}

// promptChars is the characters (runes) of the prompt text req sends:
// its messages' content, the nonce included (Record.PromptChars). A
// templated request's text behind its nonce was counted once, with its
// template: a mix prompt of 24,000 bytes is not counted per request.
func promptChars(req Request) int {
	if t := req.prompt; t != nil && len(req.Messages) == 1 && len(req.Messages[0].Content) >= len(t.text) {
		c := req.Messages[0].Content
		return utf8.RuneCountInString(c[:len(c)-len(t.text)]) + t.chars
	}
	n := 0
	for _, m := range req.Messages {
		n += utf8.RuneCountInString(m.Content)
	}
	return n
}

var (
	promptMu    sync.Mutex
	promptCache = map[int]*promptTemplate{}
)

// promptFor returns the template of chars characters of filler text
// (about chars/4 tokens), the same for every call.
func promptFor(chars int) *promptTemplate {
	promptMu.Lock()
	defer promptMu.Unlock()
	if t, ok := promptCache[chars]; ok {
		return t
	}
	var b []byte
	b = append(b, "Summarise the following notes in two sentences. "...)
	for len(b) < chars {
		b = append(b, filler...)
	}
	t := newTemplate(string(b[:max(chars, 0)]))
	promptCache[chars] = t
	return t
}

// promptText returns chars characters of filler text (about chars/4
// tokens), the same for every call.
func promptText(chars int) string { return promptFor(chars).text }

// Other texts shared by many requests (a Chain's opening prompt, a size
// of prompt that a replayed trace asks for more than once) have a shared
// template too: the same text gives the same template in every run, so a
// provider's prebuilt body of it (kept by template) serves them all. At
// most maxSharedTemplates texts of at most maxTemplateChars bytes are
// kept (their strings as given, not copied); past either, a text has no
// template and its requests are encoded in full, as without one.
const (
	maxSharedTemplates = 256
	maxTemplateChars   = 256 << 10
)

var sharedTemplates = map[string]*promptTemplate{}

// templateFor returns the shared template of text, or nil when it is
// longer than maxTemplateChars or the table is full.
func templateFor(text string) *promptTemplate {
	if len(text) > maxTemplateChars {
		return nil
	}
	promptMu.Lock()
	defer promptMu.Unlock()
	if t, ok := sharedTemplates[text]; ok {
		return t
	}
	if len(sharedTemplates) >= maxSharedTemplates {
		return nil
	}
	t := newTemplate(text)
	sharedTemplates[text] = t
	return t
}

// appendNonced appends the message content nonce + text.
func appendNonced(b []byte, n nonceSource, traceID, text string) []byte {
	b = n.appendPrefix(b, traceID)
	return append(b, text...)
}

// maxBodyTemplates and maxBodyBytes bound a provider's prebuilt bodies
// (64 shapes, 16 MiB of bodies; the default mix's three classes take ~29
// KB for each set of options): past either, bodies of new shapes
// are built per request (as they would be without), with no search for
// the nonce's place.
const (
	maxBodyTemplates = 64
	maxBodyBytes     = 16 << 20
)

// bodyKey is what a prebuilt body depends on besides the provider.
type bodyKey struct {
	prompt        *promptTemplate
	nonceLen      int
	maxTokens     int
	temperature   uint64 // its bits; hasTemp says whether it is sent
	hasTemp       bool
	streamOptions bool
}

// bodyTemplate is a prebuilt body; the nonce's bytes are body[at:at+n]
// (n the key's nonceLen). A nil body: the shape cannot be prebuilt (its
// nonce's place is not unique), each request is encoded in full.
type bodyTemplate struct {
	body []byte
	at   int
}

// bodyCache is a provider's prebuilt bodies.
type bodyCache struct {
	mu    sync.Mutex
	m     map[bodyKey]*bodyTemplate
	bytes int // the bodies' lengths summed
}

// templated reports whether req is its template's text behind a nonce
// the encoders copy as it is, and returns the nonce.
func templated(req Request) (nonce string, ok bool) {
	t := req.prompt
	if t == nil || len(req.Messages) != 1 || req.Messages[0].Role != "user" {
		return "", false
	}
	c := req.Messages[0].Content
	if len(c) < len(t.text) || c[len(c)-len(t.text):] != t.text {
		return "", false
	}
	nonce = c[:len(c)-len(t.text)]
	if nonce != "" && (len(nonce) != defaults.NonceLen || !jsonPlain(nonce)) {
		return "", false
	}
	return nonce, true
}

// jsonPlain reports whether encoding/json writes s as it is (printable
// ASCII other than " \ < > &).
func jsonPlain(s string) bool {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c >= 0x7F || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}
