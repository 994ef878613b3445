package fakeprovider

import (
	"encoding/json"
	"math/rand/v2"
	"strconv"
)

// drawToolCalls decides, with r (the request's tool-call stream), whether
// the answer is tool calls (Profile.ToolCalls) and how long each call's
// arguments are. The first call's length is drawn right after the coin, so
// a profile without parallel draws exactly what it drew before parallel
// existed; the count and the other calls' lengths come after.
func (pl *plan) drawToolCalls(tc ToolCalls, r *rand.Rand) {
	if r.Float64() >= tc.Probability {
		return
	}
	args := tc.ArgumentsTokens.or(Fixed(defaultArgumentsTokens))
	first := max(1, args.Sample(r))
	n := 1
	if tc.Parallel.IsSet() {
		n = max(1, tc.Parallel.Sample(r))
	}
	pl.toolArgs = make([]int, n)
	pl.toolArgs[0] = first
	total := first
	for i := 1; i < n; i++ {
		pl.toolArgs[i] = max(1, args.Sample(r))
		total += pl.toolArgs[i]
	}
	pl.textOutput, pl.output, pl.toolCall = pl.output, total, true
}

// withoutTools undoes drawToolCalls for a request that forbids tool calls
// (tool_choice none): the answer is the text it would have been.
func (pl *plan) withoutTools() {
	if pl.toolCall {
		pl.output, pl.toolCall, pl.toolArgs = pl.textOutput, false, nil
	}
}

// toolAt places the answer token i (from 0, after any reasoning) of a
// tool-call answer: in call `call`, `within` tokens after its start, in a
// call whose arguments are n tokens long.
func (pl *plan) toolAt(i int) (call, within, n int) {
	for call, n = range pl.toolArgs {
		if i < n {
			return call, i, n
		}
		i -= n
	}
	return len(pl.toolArgs) - 1, i + n, n // past the end: the last call
}

// toolLeft is the tokens left in the call that answer token i is in: a
// chunk never spans two calls, so each of a protocol's events belongs to
// one call.
func (pl *plan) toolLeft(i int) int {
	_, within, n := pl.toolAt(i)
	return max(1, n-within)
}

// toolTexts is the arguments of each call begun within the first content
// answer tokens (the last one cut short when the cap cut it).
func (pl *plan) toolTexts(content int) []string {
	var out []string
	for _, n := range pl.toolArgs {
		if content <= 0 {
			break
		}
		k := min(n, content)
		out = append(out, string(appendArgs(nil, 0, k, n)))
		content -= k
	}
	return out
}

// toolID names call `call` of the answer at arrival index index, with the
// protocol's prefix (call, toolu): the first call is prefix_fake_N, the
// others prefix_fake_N_call.
func toolID(prefix string, index, call int) string {
	id := prefix + "_fake_" + strconv.Itoa(index)
	if call > 0 {
		id += "_" + strconv.Itoa(call)
	}
	return id
}

// toolChoiceNone reports whether a request's tool_choice forbids tool
// calls: "none" for chat and Responses, {"type":"none"} for Messages.
// Other values, and none at all, allow them.
func toolChoiceNone(raw json.RawMessage, proto protocol) bool {
	if proto == protoMessages {
		var c struct {
			Type string `json:"type"`
		}
		return json.Unmarshal(raw, &c) == nil && c.Type == "none"
	}
	var s string
	return json.Unmarshal(raw, &s) == nil && s == "none"
}
