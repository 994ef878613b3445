package protocol

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream/eventstreamapi"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// The AWS event stream's frame: a 12-byte prelude (total length, headers
// length, the prelude's CRC), the headers, the payload, the frame's CRC.
const (
	framePrelude = 12
	frameMin     = framePrelude + 4
	// frameMax bounds a frame: the largest payload (16 MiB) and headers
	// (128 KiB) AWS's event streams carry.
	frameMax = 16<<20 + 128<<10 + frameMin
)

// bedrockFramer cuts an AWS event stream into its messages, each checked
// (both CRCs) and decoded by aws-sdk-go-v2's eventstream.Decoder. It
// emits an event message as its :event-type and payload, an exception
// as "exception:" and its :exception-type, an error message as "error:"
// and its :error-code, with {"message": :error-message}.
type bedrockFramer struct {
	dec     *eventstream.Decoder
	buf     []byte
	need    int // the length of the frame being read; 0 before its prelude is checked
	payload []byte
}

func newBedrockFramer() *bedrockFramer { return &bedrockFramer{dec: eventstream.NewDecoder()} }

// Feed emits every frame b completes.
func (f *bedrockFramer) Feed(b []byte, emit func(typ string, data []byte)) error {
	f.buf = append(f.buf, b...)
	off := 0
	defer func() { f.buf = f.buf[:copy(f.buf, f.buf[off:])] }()
	for {
		rest := f.buf[off:]
		if f.need == 0 {
			if len(rest) < framePrelude {
				return nil
			}
			// The decoder checks the prelude's CRC before it reads on:
			// a frame cut after its prelude fails for want of bytes.
			_, err := f.dec.Decode(bytes.NewReader(rest[:framePrelude]), nil)
			var ce eventstream.ChecksumError
			var le eventstream.LengthError
			if errors.As(err, &ce) || errors.As(err, &le) {
				return fmt.Errorf("a bad event-stream frame at byte %d: prelude: %v", off, err)
			}
			total, headers := binary.BigEndian.Uint32(rest), binary.BigEndian.Uint32(rest[4:])
			if total < frameMin || total > frameMax || headers > total-frameMin {
				return fmt.Errorf("a bad event-stream frame: length %d, headers %d (a frame holds %d to %d bytes)", total, headers, frameMin, frameMax)
			}
			f.need = int(total)
		}
		if len(rest) < f.need {
			return nil
		}
		m, err := f.dec.Decode(bytes.NewReader(rest[:f.need]), f.payload[:0])
		if err != nil {
			return fmt.Errorf("a bad event-stream frame: %v", err)
		}
		f.payload = m.Payload
		off += f.need
		f.need = 0
		typ, data := frameEvent(m)
		emit(typ, data)
	}
}

// End reports a stream cut inside a frame.
func (f *bedrockFramer) End() error {
	if len(f.buf) > 0 {
		return fmt.Errorf("the stream ended inside an event-stream frame (%d bytes of it)", len(f.buf))
	}
	return nil
}

// frameEvent is the event type and data of a message.
func frameEvent(m eventstream.Message) (typ string, data []byte) {
	header := func(name string) string {
		if v, ok := m.Headers.Get(name).(eventstream.StringValue); ok {
			return string(v)
		}
		return ""
	}
	switch mt := header(eventstreamapi.MessageTypeHeader); mt {
	case eventstreamapi.EventMessageType, "":
		return header(eventstreamapi.EventTypeHeader), m.Payload
	case eventstreamapi.ExceptionMessageType:
		return bedrockExceptionPrefix + header(eventstreamapi.ExceptionTypeHeader), m.Payload
	case eventstreamapi.ErrorMessageType:
		msg, _ := json.Marshal(map[string]string{"message": header(eventstreamapi.ErrorMessageHeader)})
		return bedrockErrorPrefix + header(eventstreamapi.ErrorCodeHeader), msg
	default:
		return "message-type " + mt, m.Payload
	}
}

// BedrockBaseURL is the base URL of a Bedrock endpoint given as a region
// ("us-east-1": https://bedrock-runtime.us-east-1.amazonaws.com) or as
// an http(s) URL (kept as it is); the error does not show the value
// (it may be a secret given in its place).
func BedrockBaseURL(endpoint string) (string, error) {
	if endpoint != "" && strings.Trim(endpoint, "abcdefghijklmnopqrstuvwxyz0123456789-") == "" {
		return "https://bedrock-runtime." + endpoint + ".amazonaws.com", nil
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", errors.New("protocol: Bedrock endpoint is neither a region (us-east-1) nor an http(s) URL")
	}
	return endpoint, nil
}

// BedrockTarget is the Bedrock endpoint the AWS environment variables
// name (see BedrockFromEnv).
type BedrockTarget struct {
	// BaseURL is the endpoint's base URL; Model the model ID.
	BaseURL, Model string
	// APIKey is a Bedrock API key (AWS_BEARER_TOKEN_BEDROCK), sent as a
	// bearer token instead of a signature when HasAPIKey.
	APIKey    string
	HasAPIKey bool
}

// BedrockFromEnv reads the Bedrock endpoint from the environment as
// AWS's SDKs do: the model from BEDROCK_MODEL_ID; the endpoint from
// AWS_ENDPOINT_URL_BEDROCK_RUNTIME, else AWS_ENDPOINT_URL, else the
// region's (AWS_REGION, else AWS_DEFAULT_REGION); a Bedrock API key from
// AWS_BEARER_TOKEN_BEDROCK when set, else SigV4 credentials (see
// BedrockSigner), checked. The error names the variables that are unset
// or wrong, never a value.
func BedrockFromEnv() (BedrockTarget, error) {
	env := Bedrock.Env
	var t BedrockTarget
	t.Model = os.Getenv(env.Model)
	region := cmp.Or(os.Getenv(EnvAWSRegion), os.Getenv(EnvAWSDefaultRegion))
	endpoint := cmp.Or(os.Getenv(env.BaseURL), os.Getenv("AWS_ENDPOINT_URL"), region)
	t.APIKey, t.HasAPIKey = os.LookupEnv(env.APIKey)
	var missing []string
	if t.Model == "" {
		missing = append(missing, env.Model)
	}
	if endpoint == "" {
		missing = append(missing, EnvAWSRegion+" (or "+env.BaseURL+")")
	}
	if !t.HasAPIKey && os.Getenv(EnvAWSAccessKeyID) == "" {
		missing = append(missing, EnvAWSAccessKeyID+" and "+EnvAWSSecretAccessKey+" (or "+env.APIKey+")")
	}
	if len(missing) > 0 {
		return t, errors.New("protocol: " + strings.Join(missing, ", ") + " not set")
	}
	var err error
	if t.BaseURL, err = BedrockBaseURL(endpoint); err != nil {
		return t, err
	}
	if !t.HasAPIKey {
		u, _ := url.Parse(t.BaseURL)
		_, err = BedrockSigner(u)
	}
	return t, err
}

// bedrockRegionOf is the region an AWS endpoint's host names
// (bedrock-runtime[-fips].REGION.amazonaws.com[.cn]), or "".
func bedrockRegionOf(host string) string {
	labels := strings.Split(host, ".")
	if len(labels) < 4 || !strings.HasPrefix(labels[0], "bedrock-runtime") || labels[2] != "amazonaws" {
		return ""
	}
	return labels[1]
}

// The AWS environment variables BedrockSigner reads.
const (
	EnvAWSAccessKeyID     = "AWS_ACCESS_KEY_ID"
	EnvAWSSecretAccessKey = "AWS_SECRET_ACCESS_KEY"
	EnvAWSSessionToken    = "AWS_SESSION_TOKEN"
	EnvAWSRegion          = "AWS_REGION"
	EnvAWSDefaultRegion   = "AWS_DEFAULT_REGION"
)

// BedrockSigner is Bedrock's Protocol.Signer: SigV4 (service "bedrock")
// with the credentials of AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
// AWS_SESSION_TOKEN (optional), in the region the endpoint's host names
// (bedrock-runtime.REGION.amazonaws.com), else AWS_REGION, else
// AWS_DEFAULT_REGION, signed by aws-sdk-go-v2's v4 signer. Without an
// access key ID and a secret key it returns nil (requests go unsigned);
// with one but not the other, or without a region, an error that names
// the variables. The three credentials are the Signing's Secrets.
func BedrockSigner(u *url.URL) (*Signing, error) {
	id, secret, token := os.Getenv(EnvAWSAccessKeyID), os.Getenv(EnvAWSSecretAccessKey), os.Getenv(EnvAWSSessionToken)
	switch {
	case id == "" && secret == "":
		return nil, nil
	case id == "":
		return nil, errors.New("protocol: Bedrock: " + EnvAWSSecretAccessKey + " is set but " + EnvAWSAccessKeyID + " is not")
	case secret == "":
		return nil, errors.New("protocol: Bedrock: " + EnvAWSAccessKeyID + " is set but " + EnvAWSSecretAccessKey + " is not")
	}
	region := cmp.Or(bedrockRegionOf(u.Hostname()), os.Getenv(EnvAWSRegion), os.Getenv(EnvAWSDefaultRegion))
	if region == "" {
		return nil, errors.New("protocol: Bedrock: no region to sign for: the endpoint's host names none; set " + EnvAWSRegion)
	}
	creds := aws.Credentials{AccessKeyID: id, SecretAccessKey: secret, SessionToken: token}
	signer := v4.NewSigner()
	secrets := []string{id, secret}
	if token != "" {
		secrets = append(secrets, token)
	}
	return &Signing{
		Sign: func(r *http.Request, bodySHA256 string) error {
			return signer.SignHTTP(r.Context(), creds, r, bodySHA256, "bedrock", region, time.Now())
		},
		Secrets:  secrets,
		Describe: "SigV4 (bedrock, " + region + ")",
	}, nil
}
