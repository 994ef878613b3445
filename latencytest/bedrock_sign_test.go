package latencytest_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/tailguard/tailguard/internal/redact/redacttest"
	"github.com/tailguard/tailguard/latencytest"
)

// The test credentials (AWS's documented example values, lengthened).
const (
	testAKID   = "AKIAIOSFODNN7EXAMPLE"
	testSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	testToken  = "FwoGZXIvYXdzEBaDDsessToken-0123456789abcdef-qrstuvwxyz"
)

// setAWSEnv sets the AWS variables the signer reads.
func setAWSEnv(t *testing.T, region string) {
	t.Setenv("AWS_ACCESS_KEY_ID", testAKID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", testSecret)
	t.Setenv("AWS_SESSION_TOKEN", testToken)
	t.Setenv("AWS_REGION", region)
	t.Setenv("AWS_DEFAULT_REGION", "")
}

// received is a request as the server saw it, with its body.
type received struct {
	req  *http.Request
	body []byte
}

// bedrockStream is a good ConverseStream answer whose text is text.
func bedrockStream(t testing.TB, text string) []byte {
	var buf bytes.Buffer
	enc := eventstream.NewEncoder()
	for _, f := range [][2]string{{"messageStart", `{"role":"assistant"}`},
		{"contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":` + quote(text) + `}}`},
		{"messageStop", `{"stopReason":"end_turn"}`},
		{"metadata", `{"usage":{"inputTokens":3,"outputTokens":1},"metrics":{"latencyMs":7}}`}} {
		var h eventstream.Headers
		h.Set(":message-type", eventstream.StringValue("event"))
		h.Set(":event-type", eventstream.StringValue(f[0]))
		if err := enc.Encode(&buf, eventstream.Message{Headers: h, Payload: []byte(f[1])}); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// Every request is signed with SigV4 before it is sent, on both HTTP
// paths: the server re-signs what it received with the same credentials
// and time and gets the same Authorization, whose scope names the
// region and service "bedrock"; the session token travels in
// X-Amz-Security-Token. The description says signing is outside the
// clock.
func TestBedrockSigV4(t *testing.T) {
	setAWSEnv(t, "us-west-2")
	var mu sync.Mutex
	var got []received
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, received{r.Clone(context.Background()), b})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
		_, _ = w.Write(bedrockStream(t, "ok"))
	}))
	defer srv.Close()
	for _, opts := range [][]latencytest.Option{nil, {latencytest.WithNetHTTP()}} {
		p := latencytest.Bedrock(srv.URL, "meta.llama3-70b-instruct-v1:0", opts...)
		rec := p.Call(context.Background(), latencytest.Request{ID: "sig-1", MaxTokens: 50,
			Messages: []latencytest.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hi"}}})
		if rec.Err != "" || rec.Content != "ok" || rec.ServerLatency != 7*time.Millisecond {
			t.Fatalf("signed call: %+v", rec)
		}
		if c := p.Describe().Client; !strings.Contains(c, "signed (SigV4 (bedrock, us-west-2)) before its clock starts") {
			t.Errorf("the description says how requests are signed: %q", c)
		}
		p.CloseIdleConnections()
	}
	mu.Lock() // the handler's writes reach us through a socket, which the race detector does not see
	got = append([]received(nil), got...)
	mu.Unlock()
	if len(got) != 2 {
		t.Fatalf("%d requests", len(got))
	}
	for i, rc := range got {
		r := rc.req
		auth := r.Header.Get("Authorization")
		date := r.Header.Get("X-Amz-Date")
		prefix := "AWS4-HMAC-SHA256 Credential=" + testAKID + "/" + date[:8] + "/us-west-2/bedrock/aws4_request, SignedHeaders="
		if !strings.HasPrefix(auth, prefix) || r.Header.Get("X-Amz-Security-Token") != testToken {
			t.Errorf("request %d: Authorization %q, token %q", i, auth, r.Header.Get("X-Amz-Security-Token"))
		}
		if want := `{"messages":[{"role":"user","content":[{"text":"hi"}]}],"system":[{"text":"be brief"}],"inferenceConfig":{"maxTokens":50}}`; string(rc.body) != want {
			t.Errorf("request %d: body %s", i, rc.body)
		}
		signedAt, err := time.Parse("20060102T150405Z", date)
		if err != nil {
			t.Fatal(err)
		}
		u, _ := url.Parse("http://" + r.Host + r.URL.EscapedPath())
		again := &http.Request{Method: r.Method, URL: u, Host: r.Host, Header: r.Header.Clone(), ContentLength: int64(len(rc.body))}
		again.Header.Del("Authorization")
		again.Header.Del("User-Agent")
		sum := sha256.Sum256(rc.body)
		creds := aws.Credentials{AccessKeyID: testAKID, SecretAccessKey: testSecret, SessionToken: testToken}
		if err := v4.NewSigner().SignHTTP(context.Background(), creds, again, hex.EncodeToString(sum[:]), "bedrock", "us-west-2", signedAt); err != nil {
			t.Fatal(err)
		}
		if again.Header.Get("Authorization") != auth {
			t.Errorf("request %d: the signature does not verify:\nsent    %s\nre-sign %s", i, auth, again.Header.Get("Authorization"))
		}
		for _, h := range []string{"content-type", "host", "x-amz-date", "x-amz-security-token", "x-request-id"} {
			if !strings.Contains(auth, h) {
				t.Errorf("request %d: %s is not signed: %s", i, h, auth)
			}
		}
	}
}

// A hostile server echoes the credentials (the access key ID, the
// secret key, the session token, the Authorization header) raw,
// JSON-escaped, percent-escaped, in base64 and hex, in an error body, in
// the answer text, in an exception's message and in an event type; no
// run of 8 bytes of any of them reaches a record, its notes, the JSONL
// records, the description or a panic's text.
func TestBedrockCredentialsNeverLeak(t *testing.T) {
	setAWSEnv(t, "eu-central-1")
	var n int
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		i := n
		n++
		mu.Unlock()
		auth := r.Header.Get("Authorization")
		token := r.Header.Get("X-Amz-Security-Token")
		echo := strings.Join([]string{auth, token, testSecret, url.QueryEscape(testSecret),
			base64.StdEncoding.EncodeToString([]byte(testSecret)), hex.EncodeToString([]byte(token)),
			base64.URLEncoding.EncodeToString([]byte(testAKID + ":" + testSecret))}, " | ")
		switch i % 4 {
		case 0:
			w.Header().Set("X-Amzn-Errortype", "UnrecognizedClientException")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(403)
			_, _ = io.WriteString(w, `{"message":`+quote("The security token included in the request is invalid: "+echo)+`}`)
			return
		case 1:
			w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
			_, _ = w.Write(bedrockStream(t, "you sent "+echo))
			return
		}
		var buf bytes.Buffer
		var h eventstream.Headers
		if i%4 == 2 {
			h.Set(":message-type", eventstream.StringValue("exception"))
			h.Set(":exception-type", eventstream.StringValue("throttlingException"))
		} else {
			h.Set(":message-type", eventstream.StringValue("event"))
			h.Set(":event-type", eventstream.StringValue("x"+testSecret+token))
		}
		_ = eventstream.NewEncoder().Encode(&buf, eventstream.Message{Headers: h, Payload: []byte(`{"message":` + quote(echo) + `}`)})
		w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
		_, _ = w.Write(buf.Bytes())
	}))
	defer srv.Close()
	p := latencytest.Bedrock(srv.URL, "amazon.nova-pro-v1:0")
	defer p.CloseIdleConnections()
	res, err := latencytest.Batch{Requests: 8, NoWarmup: true, Concurrency: 2, Load: latencytest.Load{KeepContent: true}}.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := latencytest.WriteRecords(&out, res.Records); err != nil {
		t.Fatal(err)
	}
	disc, _ := json.Marshal(res.Disclosure)
	texts := map[string]string{"records": out.String(), "description": fmt.Sprint(p.Describe()), "disclosure": string(disc)}
	classes := map[string]int{}
	for _, rec := range res.Records {
		classes[rec.Err]++
	}
	if classes["http_403"] != 2 || classes[""] != 2 || classes["http_429"] != 2 || classes["truncated"] != 2 {
		t.Errorf("classes %v", classes)
	}
	if !strings.Contains(out.String(), "[redacted]") {
		t.Error("the echoes were not redacted (nothing marked)")
	}
	for name, text := range texts {
		for _, secret := range []string{testAKID, testSecret, testToken} {
			if runs := append(redacttest.Runs(text, secret), redacttest.Leaks(text, secret)...); len(runs) > 0 {
				t.Errorf("%s leaks %q: %q", name, secret[:4], runs)
			}
		}
	}
	// Half-set credentials are refused, naming the variable, never a value.
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	msg := func() (msg string) {
		defer func() { msg = fmt.Sprint(recover()) }()
		latencytest.Bedrock("us-east-1", "m")
		return ""
	}()
	if !strings.Contains(msg, "AWS_SECRET_ACCESS_KEY") || strings.Contains(msg, testAKID) {
		t.Errorf("half-set credentials: %q", msg)
	}
}

// BedrockFromEnv reads the AWS variables as AWS's SDKs do: the endpoint
// override, else the region's endpoint; a bearer key when set; the
// error names what is missing.
func TestBedrockFromEnv(t *testing.T) {
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
		"AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "BEDROCK_MODEL_ID"} {
		t.Setenv(v, "")
	}
	_, err := latencytest.BedrockFromEnv()
	if err == nil || !strings.Contains(err.Error(), "BEDROCK_MODEL_ID") || !strings.Contains(err.Error(), "AWS_REGION") ||
		!strings.Contains(err.Error(), "AWS_ACCESS_KEY_ID") {
		t.Fatalf("nothing set: %v", err)
	}
	t.Setenv("BEDROCK_MODEL_ID", "us.anthropic.claude-sonnet-4-20250514-v1:0")
	setAWSEnv(t, "ap-south-1")
	p, err := latencytest.BedrockFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	d := p.Describe()
	if d.Endpoint != "https://bedrock-runtime.ap-south-1.amazonaws.com/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0/converse-stream" ||
		!strings.Contains(d.Client, "SigV4 (bedrock, ap-south-1)") {
		t.Errorf("from the region: %+v", d)
	}
	t.Setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "http://127.0.0.1:9/proxy")
	if p, err = latencytest.BedrockFromEnv(latencytest.WithoutStreaming()); err != nil || p.Describe().Endpoint != "http://127.0.0.1:9/proxy/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0/converse" {
		t.Errorf("from the override, not streaming: %v %+v", err, p.Describe())
	}
	t.Setenv("AWS_REGION", "")
	if _, err = latencytest.BedrockFromEnv(); err == nil || !strings.Contains(err.Error(), "AWS_REGION") {
		t.Errorf("credentials without a region for a host that names none: %v", err)
	}
	t.Setenv("AWS_BEARER_TOKEN_BEDROCK", "bedrock-api-key-0123456789")
	if p, err = latencytest.BedrockFromEnv(); err != nil || strings.Contains(p.Describe().Client, "SigV4") {
		t.Errorf("a Bedrock API key is sent instead of a signature: %v", err)
	}
}

// Instrument around a client that signs as AWS's SDKs do: the access key
// ID in the SigV4 Authorization header and the session token are
// redacted from what the record keeps, however the server echoes them
// (here in an exception's message, raw and in base64), and the AWS event
// stream is decoded as Bedrock's.
func TestBedrockInstrumentRedactsSigV4(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, cred, _ := strings.Cut(r.Header.Get("Authorization"), "Credential=")
		akid, _, _ := strings.Cut(cred, "/")
		echo := "key " + akid + ", token " + base64.StdEncoding.EncodeToString([]byte(r.Header.Get("X-Amz-Security-Token")))
		var buf bytes.Buffer
		var h eventstream.Headers
		h.Set(":message-type", eventstream.StringValue("exception"))
		h.Set(":exception-type", eventstream.StringValue("validationException"))
		_ = eventstream.NewEncoder().Encode(&buf, eventstream.Message{Headers: h, Payload: []byte(`{"message":` + quote(echo) + `}`)})
		w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
		_, _ = w.Write(buf.Bytes())
	}))
	defer srv.Close()
	hc := &http.Client{Transport: latencytest.Instrument(nil)}
	rec := latencytest.Func(func(ctx context.Context, _ latencytest.Request) error {
		body := []byte(`{"messages":[{"role":"user","content":[{"text":"hi"}]}]}`)
		r, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/model/m/converse-stream", bytes.NewReader(body))
		sum := sha256.Sum256(body)
		creds := aws.Credentials{AccessKeyID: testAKID, SecretAccessKey: testSecret, SessionToken: testToken}
		if err := v4.NewSigner().SignHTTP(ctx, creds, r, hex.EncodeToString(sum[:]), "bedrock", "us-east-1", time.Now()); err != nil {
			return err
		}
		resp, err := hc.Do(r)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}).Call(context.Background(), latencytest.Request{ID: "i-1"})
	hc.CloseIdleConnections()
	if rec.Err != "http_400" || !strings.Contains(rec.Detail, "validationException") || !strings.Contains(rec.Detail, "[redacted]") {
		t.Errorf("record %+v", rec)
	}
	b, _ := json.Marshal(rec)
	for _, secret := range []string{testAKID, testToken} {
		if runs := append(redacttest.Runs(string(b), secret), redacttest.Leaks(string(b), secret)...); len(runs) > 0 {
			t.Errorf("the record leaks %q: %q", secret[:4], runs)
		}
	}
}
