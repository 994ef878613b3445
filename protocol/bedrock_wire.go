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

// BedrockEndpoint is the Bedrock runtime endpoint of an AWS region:
// "https://bedrock-runtime.us-east-1.amazonaws.com" for "us-east-1".
func BedrockEndpoint(region string) string {
	return "https://bedrock-runtime." + region + ".amazonaws.com"
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
