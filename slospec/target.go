package slospec

import (
	"cmp"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/protocol"
)

// Target names what a spec measures: exactly one of a fake preset, a
// fake profile file, an endpoint (chat completions, Responses or
// Messages: see Endpoint), or records already measured.
type Target struct {
	// Preset names a fakeprovider preset (fakeprovider.Presets).
	Preset string
	// Profile is a fakeprovider profile file. ParseSpec keeps the path as
	// written (relative to the working directory); LoadSpec makes it
	// relative to the spec file's directory.
	Profile string
	// Endpoint reads an endpoint from the environment.
	Endpoint *Endpoint
	// Records is a glob of records files (records.jsonl as
	// latencytest's Measure writes them) to judge instead of running the
	// load (see Spec's Records). ParseSpec keeps it as written; LoadSpec
	// makes a relative one relative to the spec file's directory.
	Records string
	// Format is the format of the Records files: one of
	// records.Formats ("aiperf", "vllm", ...), read with
	// records.ImportLevels; "" reads this package's own records.
	Format string
	// Seed, when set, replaces a fake profile's seed.
	Seed *uint64

	profileLine int    // where the spec wrote profile, for LoadSpec's errors
	profileKey  string // "target.profile" or "chains.target.profile"
}

// Endpoint names the environment variables that hold an endpoint's
// base URL ("https://host/v1"), API key and model, and the protocol it
// speaks. Empty names take the protocol's defaults: latencytest.EnvBaseURL,
// EnvAPIKey and EnvModel for chat and responses, ANTHROPIC_BASE_URL,
// ANTHROPIC_API_KEY and ANTHROPIC_MODEL for messages,
// GOOGLE_GEMINI_BASE_URL (default Google's), GEMINI_API_KEY (or
// GOOGLE_API_KEY when that is unset) and GEMINI_MODEL for gemini;
// AWS_ENDPOINT_URL_BEDROCK_RUNTIME, AWS_BEARER_TOKEN_BEDROCK and
// BEDROCK_MODEL_ID for bedrock. The base URL and model must be set and
// non-empty, the key must be set (it may be empty, for local servers;
// bedrock signs with the AWS credentials without one): a spec run with
// any of them unset skips.
type Endpoint struct {
	BaseURLEnv string
	APIKeyEnv  string
	ModelEnv   string
	// Protocol names a built-in protocol (protocol.Names: ProtocolChat,
	// also for "", ProtocolResponses or ProtocolMessages): the provider
	// is latencytest.NewLLM with protocol.Lookup(Protocol), its base URL
	// completed as the protocol's BaseURL says (Anthropic's gains "/v1"
	// unless the path ends in it), its variables the protocol's Env.
	Protocol protocol.Name
	// NoStreaming (the spec's "stream: false") asks for whole answers
	// instead of streams (latencytest.WithoutStreaming): Total is each
	// body's end, and TTFT and the other token clocks are not observed,
	// so ParseSpec refuses objectives on them (a token clock, the decode
	// speed, max_gap.max, cold_start).
	NoStreaming bool
}

// The built-in protocols an endpoint target speaks (Endpoint.Protocol),
// as package protocol names them.
const (
	ProtocolChat      = protocol.NameChat      // OpenAI chat completions
	ProtocolResponses = protocol.NameResponses // OpenAI's Responses API
	ProtocolMessages  = protocol.NameMessages  // Anthropic's Messages API
	ProtocolGemini    = protocol.NameGemini    // Google's Gemini API
	ProtocolBedrock   = protocol.NameBedrock   // Amazon Bedrock's ConverseStream
)

// FakeProfile returns the profile of a fake target (Preset or Profile),
// with Seed applied. It reads the profile file each time.
func (t Target) FakeProfile() (fakeprovider.Profile, error) {
	var (
		prof fakeprovider.Profile
		err  error
	)
	switch {
	case t.Endpoint != nil:
		return prof, errors.New("slospec: the target is an endpoint, not a fake")
	case t.Records != "":
		return prof, errors.New("slospec: the target is records, not a fake")
	case t.Preset != "" && t.Profile != "":
		return prof, errors.New("slospec: the target names both a preset and a profile")
	case t.Preset != "":
		prof, err = fakeprovider.Preset(t.Preset)
	case t.Profile != "":
		prof, err = fakeprovider.LoadProfile(t.Profile)
	default:
		return prof, errors.New("slospec: the target names no preset, profile or endpoint")
	}
	if err != nil {
		return fakeprovider.Profile{}, err
	}
	if t.Seed != nil {
		prof.Seed = *t.Seed
	}
	return prof, nil
}

func (t Target) resolve() (runTarget, string, error) {
	if t.Records != "" {
		return recordsTarget(t), "", nil
	}
	if t.Endpoint == nil {
		prof, err := t.FakeProfile()
		if err != nil {
			return runTarget{}, "", err
		}
		desc := "preset " + t.Preset
		if t.Profile != "" {
			desc = "profile " + t.Profile
		}
		desc += fmt.Sprintf(", seed %d, virtual time", prof.Seed)
		return runTarget{fake: &prof, desc: desc}, "", nil
	}
	if path := os.Getenv(EnvReplayProfile); path != "" {
		prof, err := fakeprovider.LoadProfile(path)
		if err != nil {
			return runTarget{}, "", fmt.Errorf("%s: %w", EnvReplayProfile, err)
		}
		return runTarget{fake: &prof, desc: fmt.Sprintf("endpoint replayed against the profile %s ($%s), seed %d, virtual time", path, EnvReplayProfile, prof.Seed)}, "", nil
	}
	return t.Endpoint.resolve()
}

// Vars returns the names of the base URL, API key and model variables,
// defaults applied.
func (e Endpoint) Vars() (baseURL, apiKey, model string) {
	baseURL, apiKey, model = e.BaseURLEnv, e.APIKeyEnv, e.ModelEnv
	env := protocol.Chat.Env
	if p := protocol.Lookup(e.Protocol); p != nil && p.Env.BaseURL != "" {
		env = p.Env
	}
	defBase, defKey, defModel := env.BaseURL, env.KeyVar(), env.Model
	if baseURL == "" {
		baseURL = defBase
	}
	if apiKey == "" {
		apiKey = defKey
	}
	if model == "" {
		model = defModel
	}
	return baseURL, apiKey, model
}

// defaultBase is the protocol's base URL when its variable is unset
// (protocol.Env.DefaultBaseURL: Gemini's), unless the spec names a
// variable of its own.
func (e Endpoint) defaultBase() string {
	if p := protocol.Lookup(e.Protocol); p != nil && e.BaseURLEnv == "" {
		return p.Env.DefaultBaseURL
	}
	return ""
}

// Missing names the variables that keep the endpoint from running: the
// base URL and model when unset or empty, the API key when unset (set it
// empty for a local server that needs none).
func (e Endpoint) Missing() []string {
	baseVar, keyVar, modelVar := e.Vars()
	var missing []string
	if os.Getenv(baseVar) == "" && e.defaultBase() == "" {
		missing = append(missing, baseVar)
	}
	if _, ok := os.LookupEnv(keyVar); !ok && !e.signs() {
		missing = append(missing, keyVar)
	}
	if os.Getenv(modelVar) == "" {
		missing = append(missing, modelVar)
	}
	return missing
}

// signs reports whether the endpoint's protocol signs its requests
// (Bedrock's SigV4 from the AWS variables): then its key is optional.
func (e Endpoint) signs() bool {
	p := protocol.Lookup(e.Protocol)
	return p != nil && p.Signer != nil
}

// resolve reads the endpoint from the environment; skip names the unset
// variables.
func (e Endpoint) resolve() (runTarget, string, error) {
	if missing := e.Missing(); len(missing) > 0 {
		return runTarget{}, fmt.Sprintf("endpoint target: %s not set (the API key may be set empty for a local server); skipping",
			strings.Join(missing, ", ")), nil
	}
	baseVar, keyVar, modelVar := e.Vars()
	base, key, model := cmp.Or(os.Getenv(baseVar), e.defaultBase()), os.Getenv(keyVar), os.Getenv(modelVar)
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return runTarget{}, "", fmt.Errorf("%s is not an http(s) URL (its value is not shown: it may hold a secret)", baseVar)
	}
	// An empty key is no key (WithAPIKey("") sends none).
	opts := []latencytest.Option{latencytest.WithModel(model), latencytest.WithAPIKey(key)}
	if e.NoStreaming {
		opts = append(opts, latencytest.WithoutStreaming())
	}
	api := protocol.Lookup(e.Protocol) // checked when parsed
	if api.BaseURL != nil {
		api.BaseURL(u)
		base = u.String()
	}
	if api.Signer != nil && key == "" {
		if _, err := api.Signer(u); err != nil {
			return runTarget{}, "", err
		}
	}
	p := latencytest.NewLLM(base, api, opts...)
	proto := string(api.Name)
	if e.NoStreaming {
		proto += ", not streaming"
	}
	return runTarget{provider: p, desc: fmt.Sprintf("endpoint $%s (%s), model %s, real time", baseVar, proto, model)}, "", nil
}
