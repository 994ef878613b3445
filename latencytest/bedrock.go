package latencytest

import (
	"errors"
	"strings"

	"github.com/tailguard/tailguard/protocol"
)

// Bedrock returns a Provider that streams from Amazon Bedrock's
// ConverseStream API: endpoint is a region ("us-east-1", for
// https://bedrock-runtime.us-east-1.amazonaws.com) or the endpoint's URL
// (a proxy's, or the fake provider's); requests go to endpoint +
// "/model/{modelID}/converse-stream" (WithoutStreaming: "/converse"),
// the model ID path-escaped as AWS's SDKs escape it. It speaks
// protocol.Bedrock (see there for the body, the events and the
// classes): TTFT is the first token of any kind (text, reasoning, a
// toolUse block's start or input), the first answer the first text or
// tool call, usage and the server's own latency (Record.ServerLatency,
// metrics.latencyMs) come from the metadata event, and an exception
// event fails the request with the HTTP class of its documented status
// (throttlingException: http_429).
//
// Requests are signed with SigV4 (service "bedrock") from
// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, in the
// endpoint's region (a URL's host names it, else AWS_REGION or
// AWS_DEFAULT_REGION), before each request's clock starts: signing is in
// no latency, and the disclosure says so. The three values are redacted
// from everything a record keeps, in every encoding, as WithAPIKey's key
// is. Without them requests go unsigned (the fake needs no signature);
// WithAPIKey sends a Bedrock API key as a bearer token instead. It
// panics if endpoint is neither a region nor an http(s) URL, if modelID
// is empty, or if the credentials are half set or have no region.
func Bedrock(endpoint, modelID string, opts ...Option) *LLMProvider {
	base, err := protocol.BedrockBaseURL(endpoint)
	switch {
	case modelID == "":
		panic("latencytest: Bedrock without a model ID")
	case err != nil:
		panic("latencytest: " + strings.TrimPrefix(err.Error(), "protocol: "))
	}
	return NewLLM(base, protocol.Bedrock, append([]Option{WithModel(modelID)}, opts...)...)
}

// BedrockFromEnv returns the Bedrock provider the AWS environment
// variables name, as protocol.BedrockFromEnv reads them (BEDROCK_MODEL_ID;
// AWS_ENDPOINT_URL_BEDROCK_RUNTIME or the region's endpoint;
// AWS_BEARER_TOKEN_BEDROCK or SigV4 credentials). The error names the
// variables that are unset or wrong.
func BedrockFromEnv(opts ...Option) (*LLMProvider, error) {
	t, err := protocol.BedrockFromEnv()
	if err != nil {
		return nil, errors.New("latencytest: " + strings.TrimPrefix(err.Error(), "protocol: "))
	}
	if t.HasAPIKey {
		opts = append([]Option{WithAPIKey(t.APIKey)}, opts...)
	}
	return Bedrock(t.BaseURL, t.Model, opts...), nil
}
