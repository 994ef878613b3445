package fakeprovider

import (
	"encoding/json"
	"strconv"
)

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
