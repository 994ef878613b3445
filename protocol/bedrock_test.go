package protocol

import (
	"bytes"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
)

// Converse's body: system messages as the system blocks, consecutive
// messages of one role joined into one message of several blocks, the
// cap and temperature in inferenceConfig (absent when neither is set).
func TestBedrockBody(t *testing.T) {
	temp := 0.5
	for _, tc := range []struct {
		name string
		req  Request
		want string
	}{
		{"plain", Request{Messages: []Message{{Role: "user", Content: "hi"}}},
			`{"messages":[{"role":"user","content":[{"text":"hi"}]}]}`},
		{"system, joined, config", Request{MaxTokens: 64, Temperature: &temp, Messages: []Message{
			{Role: "system", Content: "be brief"}, {Role: "user", Content: "a"}, {Role: "user", Content: "b"},
			{Role: "assistant", Content: "c"}, {Role: "user", Content: "d"}}},
			`{"messages":[{"role":"user","content":[{"text":"a"},{"text":"b"}]},{"role":"assistant","content":[{"text":"c"}]},{"role":"user","content":[{"text":"d"}]}],"system":[{"text":"be brief"}],"inferenceConfig":{"maxTokens":64,"temperature":0.5}}`},
		{"no messages", Request{}, `{"messages":[]}`},
	} {
		b, err := bedrockBody(tc.req)
		if err != nil || string(b) != tc.want {
			t.Errorf("%s: %s (%v)\nwant %s", tc.name, b, err, tc.want)
		}
	}
}

// Model IDs and inference-profile ARNs are escaped as AWS's SDKs escape
// them; the paths match Bedrock's and no other protocol's.
func TestBedrockPaths(t *testing.T) {
	arn := "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-7-sonnet-20250219-v1:0"
	want := "/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2Fus.anthropic.claude-3-7-sonnet-20250219-v1%3A0/converse-stream"
	if got := Bedrock.Path(arn); got != want {
		t.Errorf("path %s\nwant %s", got, want)
	}
	if got := Bedrock.WholePath("m~1_a.b"); got != "/model/m~1_a.b/converse" {
		t.Errorf("whole path %s", got)
	}
	for path, p := range map[string]*Protocol{want: Bedrock, "/gw/model/x/converse": Bedrock, "/v1/messages": Messages,
		"/v1/chat/completions": Chat, "/converse": nil} {
		if got := ByPath(path); got != p {
			t.Errorf("ByPath(%s) = %v", path, got)
		}
	}
	if ByStreamType("application/vnd.amazon.eventstream; charset=x") != Bedrock || ByStreamType("text/event-stream") != nil {
		t.Error("ByStreamType")
	}
	if !EndsSequence("end_turn") || !EndsSequence("stop_sequence") || EndsSequence("max_tokens") || !Bedrock.Filtered("guardrail_intervened") {
		t.Error("stop rules")
	}
}

// BedrockSigner reads the AWS variables: none set is unsigned, half set
// or no region an error naming the variables (never a value); the
// region from the endpoint's host first.
func TestBedrockSignerEnv(t *testing.T) {
	set := func(id, secret, region string) {
		t.Setenv(EnvAWSAccessKeyID, id)
		t.Setenv(EnvAWSSecretAccessKey, secret)
		t.Setenv(EnvAWSSessionToken, "")
		t.Setenv(EnvAWSRegion, region)
		t.Setenv(EnvAWSDefaultRegion, "")
	}
	local, _ := url.Parse("http://127.0.0.1:8080")
	aws, _ := url.Parse("https://bedrock-runtime-fips.ca-central-1.amazonaws.com")
	set("", "", "")
	if s, err := BedrockSigner(local); s != nil || err != nil {
		t.Errorf("no credentials: %v %v", s, err)
	}
	set("AKIAEXAMPLE123456789", "", "us-east-1")
	if _, err := BedrockSigner(local); err == nil || !strings.Contains(err.Error(), EnvAWSSecretAccessKey) || strings.Contains(err.Error(), "AKIAEXAMPLE") {
		t.Errorf("half set: %v", err)
	}
	set("AKIAEXAMPLE123456789", "secret-secret-secret", "")
	if _, err := BedrockSigner(local); err == nil || !strings.Contains(err.Error(), EnvAWSRegion) {
		t.Errorf("no region: %v", err)
	}
	s, err := BedrockSigner(aws)
	if err != nil || s.Describe != "SigV4 (bedrock, ca-central-1)" || !reflect.DeepEqual(s.Secrets, []string{"AKIAEXAMPLE123456789", "secret-secret-secret"}) {
		t.Errorf("region from the host: %+v %v", s, err)
	}
	if _, err := BedrockBaseURL("not a url"); err == nil {
		t.Error("a bad endpoint")
	}
}

// framerRun feeds b to a framer in the pieces cut at cuts and returns the
// events it emitted and whether it failed.
func framerRun(b []byte, cuts ...int) (events []string, failed bool) {
	f := newBedrockFramer()
	last := 0
	for _, c := range append(cuts, len(b)) {
		if err := f.Feed(b[last:c], func(typ string, data []byte) { events = append(events, typ+" "+string(data)) }); err != nil {
			return events, true
		}
		last = c
	}
	return events, f.End() != nil
}

func seedFrames(tb testing.TB) []byte {
	var buf bytes.Buffer
	enc := eventstream.NewEncoder()
	for _, m := range []struct{ mt, key, typ, payload string }{
		{"event", ":event-type", "messageStart", `{"role":"assistant"}`},
		{"event", ":event-type", "contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"hi"}}`},
		{"exception", ":exception-type", "throttlingException", `{"message":"slow down"}`},
	} {
		var h eventstream.Headers
		h.Set(":message-type", eventstream.StringValue(m.mt))
		h.Set(m.key, eventstream.StringValue(m.typ))
		if err := enc.Encode(&buf, eventstream.Message{Headers: h, Payload: []byte(m.payload)}); err != nil {
			tb.Fatal(err)
		}
	}
	return buf.Bytes()
}

// FuzzBedrockFramer: any bytes, whole or cut in two anywhere, give the
// same events and the same verdict, and never panic.
func FuzzBedrockFramer(f *testing.F) {
	good := seedFrames(f)
	f.Add(good, 7)
	f.Add(good[:len(good)-3], 30)
	f.Add([]byte{0, 0, 0, 16, 0, 0, 0, 0, 1, 2, 3, 4}, 2)
	f.Fuzz(func(t *testing.T, b []byte, cut int) {
		whole, wholeFailed := framerRun(b)
		if cut < 0 || cut > len(b) {
			cut = len(b) / 2
		}
		split, splitFailed := framerRun(b, cut)
		if !reflect.DeepEqual(whole, split) || wholeFailed != splitFailed {
			t.Fatalf("cut at %d: %q %v, whole %q %v", cut, split, splitFailed, whole, wholeFailed)
		}
	})
}

// The framer gives each message its type: an event's :event-type, an
// exception's "exception:" and :exception-type.
func TestBedrockFramerTypes(t *testing.T) {
	good := seedFrames(t)
	events, failed := framerRun(good, 5, 40)
	want := []string{`messageStart {"role":"assistant"}`, `contentBlockDelta {"contentBlockIndex":0,"delta":{"text":"hi"}}`,
		`exception:throttlingException {"message":"slow down"}`}
	if failed || !reflect.DeepEqual(events, want) {
		t.Errorf("%q (failed %v)", events, failed)
	}
	if _, failed := framerRun(good[:len(good)-1]); !failed {
		t.Error("a stream cut inside a frame ends badly")
	}
}
