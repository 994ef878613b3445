package latencytest

import (
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/tailguard/tailguard/internal/arrivals"
	"github.com/tailguard/tailguard/internal/defaults"
)

// Arrival is one request of a replayed trace (OpenLoop.Replay): At, when
// it is due, as an offset from the run's start; PromptTokens, when above
// 0, sizes its prompt (about 4 characters a token, as the Mix does)
// instead of the mix or OpenLoop.Prompt; MaxTokens, when above 0, caps
// its answer (max_tokens), overriding OpenLoop.MaxTokens and the mix's.
type Arrival = arrivals.Arrival

// overLimit names the size of a that is above its limit.
func overLimit(a Arrival) string {
	if a.PromptTokens > defaults.MaxReplayPromptTokens {
		return fmt.Sprintf("prompt_tokens %d is above the limit of %d", a.PromptTokens, defaults.MaxReplayPromptTokens)
	}
	return fmt.Sprintf("max_tokens %d is above the limit of %d", a.MaxTokens, defaults.MaxReplayMaxTokens)
}

// LoadSchedule reads a trace of arrivals from a file, so that a team can
// replay its own production arrival pattern with OpenLoop.Replay. One
// arrival a line: an offset from the run's start with its unit (a Go
// duration: "250ms", "0.250s", "1m30s"), then optionally the prompt
// tokens and the answer cap (max_tokens), as whole numbers of at least 1
// and at most 10,000,000 and 1,048,576 (1<<20). Fields are separated by
// white space or a comma: "0.250s 1200 300" and "250ms,1200,300" say the
// same. Blank lines and anything after a # are skipped. Offsets must not
// decrease. The error names the file and the bad line (from 1); a trace
// without any arrival is an error.
func LoadSchedule(path string) ([]Arrival, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("latencytest: schedule: %w", err)
	}
	defer f.Close()
	arr, err := readSchedule(f)
	if err != nil {
		return nil, fmt.Errorf("latencytest: schedule %s: %w", path, err)
	}
	return arr, nil
}

func readSchedule(r io.Reader) ([]Arrival, error) {
	return arrivals.Read(r, defaults.MaxReplayPromptTokens, defaults.MaxReplayMaxTokens)
}

// The arrival processes of OpenLoop.Arrivals.
const (
	// arrivalsPoisson spaces requests by exponential gaps of mean 1/Rate
	// (a Poisson process: independent users).
	arrivalsPoisson = "poisson"
	// arrivalsConstant starts request i at exactly i/Rate seconds.
	arrivalsConstant = "constant"
)

// defaultArrivalSeed is the seed of the Poisson gaps when OpenLoop.Seed is
// 0.
const defaultArrivalSeed = 7

// given is an arrivals.Seq's Given of n offsets, the i-th at(i).
func given(n int, at func(int) time.Duration) func(int) (time.Duration, bool) {
	return func(i int) (time.Duration, bool) {
		if i >= n {
			return 0, false
		}
		return at(i), true
	}
}

// replayPrompts builds the requests of an open loop: the Batch's, or,
// for a replayed trace's arrival that sizes its own prompt
// (Arrival.PromptTokens), the nonce then the filler text cut at 4
// characters a token (a prefix of the trace's longest prompt, as the mix
// writes it). The prompt sizes most asked for (up to
// maxReplayTemplates, each by more than one arrival) share a template
// (templateFor), so their bodies are prebuilt (promptbody.go); a size
// asked once is encoded in full: a template of it would be built, kept
// and never used again.
type replayPrompts struct {
	arrivals  []Arrival
	text      string                  // the longest replayed prompt
	templates map[int]*promptTemplate // by prompt tokens
}

// maxReplayTemplates is how many prompt sizes of one trace get a
// template: half a provider's prebuilt bodies (maxBodyTemplates).
const maxReplayTemplates = maxBodyTemplates / 2

// newReplayPrompts prepares the prompts of the arrivals (nil: none,
// every request is the Batch's).
func newReplayPrompts(arr []Arrival) replayPrompts {
	r := replayPrompts{arrivals: arr}
	if arr == nil {
		return r
	}
	longest := 0
	asked := map[int]int{} // prompt tokens -> arrivals
	var sizes []int        // in order of first arrival
	for _, a := range arr {
		if a.PromptTokens <= 0 {
			continue
		}
		longest = max(longest, a.PromptTokens)
		if asked[a.PromptTokens] == 0 {
			sizes = append(sizes, a.PromptTokens)
		}
		asked[a.PromptTokens]++
	}
	r.text = promptText(longest * 4)
	slices.SortStableFunc(sizes, func(a, b int) int { return asked[b] - asked[a] })
	r.templates = map[int]*promptTemplate{}
	for _, n := range sizes[:min(len(sizes), maxReplayTemplates)] {
		if asked[n] < 2 {
			break
		}
		if t := templateFor(r.text[:n*4]); t != nil {
			r.templates[n] = t
		}
	}
	return r
}

// request builds request i (trace ID id) of b, as its replayed arrival
// sizes it; the class is "replay" for an arrival that sizes its prompt,
// else the Batch's.
func (r replayPrompts) request(b Batch, id string, i int, nonce nonceSource) (Request, string) {
	if r.arrivals == nil || r.arrivals[i].PromptTokens <= 0 {
		req, class := b.request(id, i, nonce)
		if r.arrivals != nil && r.arrivals[i].MaxTokens > 0 {
			req.MaxTokens = r.arrivals[i].MaxTokens
		}
		return req, class
	}
	a := r.arrivals[i]
	req := b.Load.request(id, nil)
	switch {
	case a.MaxTokens > 0:
		req.MaxTokens = a.MaxTokens
	case req.MaxTokens == 0 && b.Prompt == "": // the mix's cap, as Batch.request gives it
		req.MaxTokens = b.Mix.class(i).MaxTokens
	}
	text := r.text[:a.PromptTokens*4]
	req.Messages = []Message{{Role: "user", Content: string(appendNonced(make([]byte, 0, defaults.NonceLen+len(text)), nonce, id, text))}}
	req.prompt = r.templates[a.PromptTokens]
	return req, "replay"
}
