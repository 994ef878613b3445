// Package ssetest holds event streams for the tests of the SSE parser and
// of the decoders above it: a chat-completions stream as OpenAI sends it,
// the same stream as other servers and proxies frame it, and a cutter.
package ssetest

import "strings"

// Pieces cuts s into pieces of n bytes (the last one shorter).
func Pieces(s []byte, n int) [][]byte {
	var out [][]byte
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}

// OpenAIStream is a real chat.completions stream (recorded shape): a role
// chunk, content chunks, a finish chunk, a usage chunk with "choices":[],
// then [DONE].
const OpenAIStream = `data: {"id":"chatcmpl-B9","object":"chat.completion.chunk","created":1727000000,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-B9","object":"chat.completion.chunk","created":1727000000,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":"Hello"},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-B9","object":"chat.completion.chunk","created":1727000000,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":" world:\n\n"},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-B9","object":"chat.completion.chunk","created":1727000000,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}

data: {"id":"chatcmpl-B9","object":"chat.completion.chunk","created":1727000000,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_1","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}

data: [DONE]

`

// OpenAIStreamData is the data of each event of OpenAIStream.
func OpenAIStreamData() []string {
	var out []string
	for _, l := range strings.Split(OpenAIStream, "\n") {
		if d, ok := strings.CutPrefix(l, "data: "); ok {
			out = append(out, d)
		}
	}
	return out
}

// Variants are OpenAIStream with other line ends, comments and
// multi-line data, as other providers and proxies send it.
func Variants() map[string]string {
	crlf := strings.ReplaceAll(OpenAIStream, "\n", "\r\n")
	return map[string]string{
		"lf":   OpenAIStream,
		"crlf": crlf,
		"cr":   strings.ReplaceAll(OpenAIStream, "\n", "\r"),
		"comments": ": OPENROUTER PROCESSING\n\n" +
			strings.ReplaceAll(OpenAIStream, "\n\ndata: ", "\n\n:keep-alive\r\n\r\ndata: "),
		"mixed": strings.Replace(strings.Replace(crlf, "\r\n\r\n", "\r\r", 2), "\r\n\r\n", "\n\n", 1),
	}
}

// BOM is the UTF-8 byte-order mark, which a parser strips from the start
// of a stream.
const BOM = "\xEF\xBB\xBF"
