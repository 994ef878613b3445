package latencytest

import (
	"cmp"
	"errors"
	"fmt"
	"net/url"
	"os"
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
	if modelID == "" {
		panic("latencytest: Bedrock without a model ID")
	}
	base, err := bedrockBase(endpoint)
	if err != nil {
		panic(err.Error())
	}
	return NewLLM(base, protocol.Bedrock, append([]Option{WithModel(modelID)}, opts...)...)
}

// bedrockBase is the base URL of a region or an endpoint URL.
func bedrockBase(endpoint string) (string, error) {
	if endpoint != "" && strings.Trim(endpoint, "abcdefghijklmnopqrstuvwxyz0123456789-") == "" {
		return protocol.BedrockEndpoint(endpoint), nil
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("latencytest: Bedrock endpoint %s is neither a region (us-east-1) nor an http(s) URL", shownURL(endpoint))
	}
	return endpoint, nil
}

// BedrockFromEnv returns the Bedrock provider the AWS environment
// variables name, as AWS's SDKs read them: the model from
// BEDROCK_MODEL_ID; the endpoint from AWS_ENDPOINT_URL_BEDROCK_RUNTIME,
// else AWS_ENDPOINT_URL, else the region's (AWS_REGION, else
// AWS_DEFAULT_REGION); a Bedrock API key from AWS_BEARER_TOKEN_BEDROCK
// when set (sent as a bearer token), else SigV4 credentials (see
// Bedrock). The error names the variables that are unset or wrong.
func BedrockFromEnv(opts ...Option) (*LLMProvider, error) {
	env := protocol.Bedrock.Env
	model := os.Getenv(env.Model)
	region := cmp.Or(os.Getenv(protocol.EnvAWSRegion), os.Getenv(protocol.EnvAWSDefaultRegion))
	endpoint := cmp.Or(os.Getenv(env.BaseURL), os.Getenv("AWS_ENDPOINT_URL"), region)
	key, hasKey := os.LookupEnv(env.APIKey)
	var missing []string
	if model == "" {
		missing = append(missing, env.Model)
	}
	if endpoint == "" {
		missing = append(missing, protocol.EnvAWSRegion+" (or "+env.BaseURL+")")
	}
	if !hasKey && os.Getenv(protocol.EnvAWSAccessKeyID) == "" {
		missing = append(missing, protocol.EnvAWSAccessKeyID+" and "+protocol.EnvAWSSecretAccessKey+" (or "+env.APIKey+")")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("latencytest: %s not set", strings.Join(missing, ", "))
	}
	base, err := bedrockBase(endpoint)
	if err != nil {
		return nil, err
	}
	if hasKey {
		return Bedrock(base, model, append([]Option{WithAPIKey(key)}, opts...)...), nil
	}
	u, _ := url.Parse(base)
	if _, err := protocol.Bedrock.Signer(u); err != nil {
		return nil, errors.New("latencytest: " + strings.TrimPrefix(err.Error(), "protocol: "))
	}
	return Bedrock(base, model, opts...), nil
}
