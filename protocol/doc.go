// Package protocol defines the wire protocols tailguard measures: one
// [Protocol] value each, built-in or your own. latencytest's providers,
// Instrument, fakeprovider and slospec all read protocols from here;
// nothing else lists them.
//
// # The seam
//
// A [Protocol] is a struct of functions and facts, not an interface: each
// field is one thing a protocol decides (its request path from the model,
// the request body, the key's header, how its stream is framed and
// decoded, its whole answer, how it is recognised, its error body, which
// finish reasons end a sequence). A field left nil takes the documented
// default (a bearer token, OpenAI's error shape), so a new field never
// breaks a protocol defined elsewhere, and one value is easy to read whole.
//
// A stream is decoded by a [Decoder], which turns each event into calls
// on a [Sink]: answer text, a refusal, a tool call, a hosted tool's
// call, a model name, a finish reason, token counts, notes, failure, the
// end. The Sink (the
// measuring stream of latencytest) stamps each call with the time of the
// read that brought it, so a decoder never sees a clock or a record.
//
// # Built-in protocols
//
// [Chat] (OpenAI chat completions), [Responses] (OpenAI's Responses API),
// [Messages] (Anthropic's Messages API), [Gemini] (Google's Gemini API)
// and [Bedrock] (Amazon Bedrock's ConverseStream) are in one table,
// [Builtin], which answers by name ([Lookup]), by request path
// ([ByPath]), by a stream's first event ([ByEvent]), by a stream's
// Content-Type ([ByStreamType]) and by a whole answer ([ByAnswer]).
//
// # Framing and signing
//
// A stream is framed as SSE or in lines ([Framing]), or by the protocol's
// own [Framer] (Bedrock's binary AWS event stream, decoded by
// aws-sdk-go-v2's eventstream package); each event is timed at the read
// that completed it, whichever. A protocol whose requests are signed
// rather than keyed (Bedrock's SigV4) makes a [Signing] per provider: it
// signs every attempt before its clock starts, and its credentials are
// redacted as keys are.
//
// # Your own
//
// Define a Protocol in your own package and pass it to latencytest.NewLLM;
// examples/customprotocol does so for an NDJSON stream. A protocol the
// library ships is one file here (its value, body and decoder) and one
// entry in the table (table.go); latencytest's providers, Instrument's
// detection and specs' `protocol:` key then know it.
package protocol
