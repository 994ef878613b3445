package fakeprovider

import (
	"encoding/json"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An empty stream is an answer that ended normally with nothing in it:
// finish_reason "stop", never "length" with 0 tokens.
func TestEmptyStreamFinishesWithStop(t *testing.T) {
	for _, tc := range []struct {
		name      string
		maxTokens int
		reasoning int
		reason    string
	}{
		{"uncapped", 0, 0, "the plain case"},
		{"cap below the planned answer", 5, 0, "64 planned tokens over a cap of 5 would say length"},
		{"reasoning over the cap", 5, 10, "reasoning that fills the cap would say length"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := mustNew(t, Profile{ReasoningTokens: Fixed(tc.reasoning), Script: []ScriptEntry{{Request: 0, Fault: FaultEmpty}}})
				r := do(t, f.Client(), "http://fake", reqOpts{id: "e", maxTokens: tc.maxTokens, usage: true})
				require.NoError(t, r.readErr)
				assert.Equal(t, 0, r.tokens, tc.reason)
				assert.True(t, r.sawDone, tc.reason)
				assert.Equal(t, "stop", r.finish, tc.reason)
				_, completion, _, ok := r.usage()
				assert.True(t, ok)
				assert.Equal(t, 0, completion, tc.reason)
				assert.Equal(t, "stop", f.Served()[0].FinishReason, tc.reason)
			})
		})
	}
}

// The error_event fault: after k tokens, one in-band error event as vLLM
// sends it, then [DONE]; no finish_reason.
func TestErrorEvent(t *testing.T) {
	for _, tc := range []struct {
		name     string
		p        Profile
		noStream bool
		tokens   int           // tokens before the error
		at       time.Duration // when the error arrives
		status   int
		reason   string
	}{
		{name: "scripted after 3 tokens", tokens: 3, status: 200,
			p: Profile{Script: []ScriptEntry{{Request: 0, Fault: FaultErrorEvent, AfterToken: 3}}},
			// first token at 200 ms, tokens 2 and 3 at 210 and 220 ms; the
			// error takes the 4th token's place at 230 ms.
			at: 230 * time.Millisecond, reason: "the script places the error"},
		{name: "drawn, before the first token", tokens: 0, status: 200,
			p:      Profile{Faults: Faults{ErrorEvent: 1}},
			at:     200 * time.Millisecond,
			reason: "faults.error_event is a probability; after_token defaults to 0"},
		{name: "drawn, after 5 tokens", tokens: 5, status: 200,
			p:      Profile{Faults: Faults{ErrorEvent: 1, AfterToken: 5}},
			at:     250 * time.Millisecond, // tokens at 200..240 ms, the error at the 6th token's 250 ms
			reason: "faults.after_token places it"},
		{name: "not streamed", tokens: 3, status: 500, noStream: true,
			p:      Profile{Script: []ScriptEntry{{Request: 0, Fault: FaultErrorEvent, AfterToken: 3}}},
			reason: "a request that does not stream gets HTTP 500 with OpenAI's error body"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tc.p.OutputTokens = Fixed(10)
				f := mustNew(t, tc.p)
				r := do(t, f.Client(), "http://fake", reqOpts{id: "ev", noStream: tc.noStream, usage: !tc.noStream})
				require.NoError(t, r.readErr, tc.reason)
				require.Equal(t, tc.status, r.status, "%s: %s", tc.reason, r.body)
				assert.Equal(t, "error_event", r.header.Get(HeaderInjected), tc.reason)
				s := f.Served()[0]
				assert.Equal(t, FaultErrorEvent, s.Fault, tc.reason)
				assert.Equal(t, tc.status, s.Status, tc.reason)
				assert.Equal(t, tc.tokens, s.Tokens, tc.reason)
				assert.Empty(t, s.FinishReason, "%s: the answer did not finish", tc.reason)
				if tc.noStream {
					var body struct {
						Error struct {
							Message, Type string
						}
					}
					require.NoError(t, json.Unmarshal([]byte(r.body), &body), r.body)
					assert.Equal(t, "server_error", body.Error.Type)
					assert.Contains(t, body.Error.Message, "error_event")
					return
				}
				assert.Equal(t, tc.tokens, r.tokens, tc.reason)
				assert.Empty(t, r.finish, "%s: no finish_reason", tc.reason)
				assert.True(t, r.sawDone, "%s: [DONE] follows the error, as in vLLM", tc.reason)
				_, _, _, usage := r.usage()
				assert.False(t, usage, "%s: no usage after an error", tc.reason)
				// The last two events: the error, then [DONE].
				require.GreaterOrEqual(t, len(r.chunks), 2)
				ev := r.chunks[len(r.chunks)-2]
				assert.Equal(t, tc.at, ev.at, tc.reason)
				var e struct {
					Error struct {
						Message string `json:"message"`
						Type    string `json:"type"`
						Param   *string
						Code    int `json:"code"`
					} `json:"error"`
				}
				require.NoError(t, json.Unmarshal([]byte(ev.raw), &e), ev.raw)
				assert.Equal(t, "InternalServerError", e.Error.Type, "vLLM's type")
				assert.Equal(t, 500, e.Error.Code, "vLLM's code is the HTTP status, a number")
				assert.Nil(t, e.Error.Param)
				assert.Contains(t, e.Error.Message, "error_event")
			})
		})
	}
}
