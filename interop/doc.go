// Package interop tests tailguard against the official LLM SDKs, a module
// of its own so that tailguard's go.mod requires no SDK and its go test
// compiles none. It replaces github.com/tailguard/tailguard with the
// directory above it, so it tests the working tree; run it with
// `cd interop && go test ./...` (CI runs it from .ci/run).
//
// # Packages
//
//   - fakeprovider: the fake's three protocols (chat completions with tool
//     calls, Responses, Messages) driven by openai-go and anthropic-sdk-go
//     in memory and over loopback, and by the Node SDKs (openai,
//     @anthropic-ai/sdk, the Vercel AI SDK).
//   - latencytest: the SDKs' calls measured through latencytest.Instrument
//     agree with the built-in providers to the nanosecond (virtual time).
//   - yourclient: the example of testing your own client (openai-go)
//     against the fake and measuring it with a Provider of your own.
//
// # Node
//
// The Node tests skip under -short, when node or npm is missing, and when
// the pinned npm packages cannot be installed (offline). They install them
// once into the user cache directory (TAILGUARD_NODE_SDK_DIR overrides it).
package interop
