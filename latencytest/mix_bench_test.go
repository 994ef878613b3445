//go:build unix

package latencytest_test

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strconv"
	"testing"

	"github.com/tailguard/tailguard/latencytest"
)

// The client's cost with the default prompt mix. BenchmarkLoopbackMix
// runs, against the loopback fake of BenchmarkLoopback, the raw reader and
// latencytest's client side by side (see sideBySide: A B A B, 2,000
// measured requests each, the API key set), both sending the default
// mix's prompts (70% ~800, 20% ~4,000, 10% ~24,000 bytes) behind a
// 38-byte nonce: the raw reader from one body per class built before the
// run, with the nonce written into place per request (the least any
// client can do), latencytest from a Batch with the default Mix. It
// reports each one's process CPU per request and their ratio's median
// and spread:
//
//	go test -run '^$' -bench LoopbackMix -benchtime 5x ./latencytest/
func BenchmarkLoopbackMix(b *testing.B) {
	url := fakeURL(b)
	bodies := newMixBodies()
	sideBySide(b,
		func(i, n int) clientRun {
			return runRawBodiesN(b, url, "mraw"+strconv.Itoa(i), n, benchAPIKey, func(dst []byte, k int, id string) []byte {
				return bodies.body(dst, "0123456789ab", k, id)
			})
		},
		func(i, n int) clientRun {
			return runLatencytestN(b, url, n, latencytest.Load{MaxTokens: loopbackTokens, Label: "mlt" + strconv.Itoa(i)},
				latencytest.WithAPIKey(benchAPIKey))
		})
}

// mixBodies is one request body per class of the default mix, split
// around the nonce's place: head + nonce + tail is what latencytest
// sends for a request of that class.
type mixBodies struct{ head, tail [][]byte }

func newMixBodies() mixBodies {
	var m mixBodies
	for _, c := range latencytest.DefaultMix.Classes {
		text, _ := json.Marshal(latencytest.PromptText(c.PromptTokens * 4))
		m.head = append(m.head, []byte(`{"max_tokens":64,"messages":[{"role":"user","content":"`))
		m.tail = append(m.tail, append(text[1:len(text)-1:len(text)-1], `"}],"model":"fake-model","stream":true,"stream_options":{"include_usage":true}}`...))
	}
	return m
}

// body appends request i's body (trace ID id) to dst.
func (m mixBodies) body(dst []byte, run string, i int, id string) []byte {
	k := latencytest.MixClassIndex(latencytest.DefaultMix, i)
	h := fnv.New64a()
	_, _ = h.Write([]byte(id))
	dst = append(dst, m.head[k]...)
	dst = fmt.Appendf(dst, "[nonce %s-%016x] ", run, h.Sum64())
	return append(dst, m.tail[k]...)
}
