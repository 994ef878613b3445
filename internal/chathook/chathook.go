// Package chathook lets the module's tests reach the two halves of the
// chat-completions decoder of package protocol: the scanner's fast path
// and encoding/json, which must agree on every chunk. Package protocol
// sets New; tests set Check.
package chathook

// New returns a fresh chat decoder's halves, each decoding one chunk into
// sink (a protocol.Sink): fast through the scanner (ok false, and nothing
// changed, when the chunk needs encoding/json), slow through
// encoding/json; end ends the stream (its notes).
var New func() (fast func(sink any, data []byte) (token, ok bool), slow func(sink any, data []byte) bool, end func(sink any))

// Check, when set (by tests), is called with every chunk the fast path
// decoded, to check it against encoding/json.
var Check func(data []byte)
