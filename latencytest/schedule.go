package latencytest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	randv2 "math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Arrival is one request of a replayed trace: when it is due, and
// optionally how big its prompt is and how many tokens it may answer.
type Arrival struct {
	// At is when the request is due, as an offset from the run's start.
	At time.Duration
	// PromptTokens, when above 0, sizes the request's prompt (about 4
	// characters a token, as the Mix does) instead of the mix or
	// OpenLoop.Prompt. 0: the OpenLoop's prompt.
	PromptTokens int
	// MaxTokens, when above 0, caps the request's answer (max_tokens),
	// overriding OpenLoop.MaxTokens and the mix's cap. 0: the OpenLoop's
	// cap.
	MaxTokens int
}

// overLimit names the size of a that is above its limit.
func (a Arrival) overLimit() string {
	if a.PromptTokens > MaxReplayPromptTokens {
		return fmt.Sprintf("prompt_tokens %d is above the limit of %d", a.PromptTokens, MaxReplayPromptTokens)
	}
	return fmt.Sprintf("max_tokens %d is above the limit of %d", a.MaxTokens, MaxReplayMaxTokens)
}

// LoadSchedule reads a trace of arrivals from a file (see ReadSchedule),
// so that a team can replay its own production arrival pattern with
// OpenLoop.Replay. The error names the file and the bad line.
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

// ReadSchedule reads a trace of arrivals, one a line: an offset from the
// run's start with its unit (a Go duration: "250ms", "0.250s", "1m30s"),
// then optionally the prompt tokens and the answer cap (max_tokens), as
// whole numbers of at least 1 and at most MaxReplayPromptTokens and
// MaxReplayMaxTokens. Fields are separated by white space or a
// comma: "0.250s 1200 300" and "250ms,1200,300" say the same. Blank lines
// and lines starting with # are skipped, and so is anything after a #.
// Offsets must not decrease. The error names the line (from 1); a trace
// without any arrival is an error.
func ReadSchedule(r io.Reader) ([]Arrival, error) {
	arr, err := readSchedule(r)
	if err != nil {
		return nil, fmt.Errorf("latencytest: schedule: %w", err)
	}
	return arr, nil
}

func readSchedule(r io.Reader) ([]Arrival, error) {
	var out []Arrival
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if k := strings.IndexByte(text, '#'); k >= 0 {
			text = text[:k]
		}
		fields := strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\r' })
		if len(fields) == 0 {
			if strings.Contains(text, ",") {
				return nil, fmt.Errorf("line %d: no offset before the comma", line)
			}
			continue
		}
		a, err := parseArrival(fields)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if n := len(out); n > 0 && a.At < out[n-1].At {
			return nil, fmt.Errorf("line %d: offset %v is before the previous line's %v (offsets must not decrease)", line, a.At, out[n-1].At)
		}
		out = append(out, a)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("after line %d: %w", line, err)
	}
	if len(out) == 0 {
		return nil, errors.New("no arrivals (every line is blank or a comment)")
	}
	return out, nil
}

// parseArrival reads "offset [prompt_tokens [max_tokens]]".
func parseArrival(fields []string) (Arrival, error) {
	var a Arrival
	if len(fields) > 3 {
		return a, fmt.Errorf("%d fields, want at most 3 (offset, prompt tokens, max tokens)", len(fields))
	}
	d, err := time.ParseDuration(fields[0])
	switch {
	case err != nil && isNumber(fields[0]):
		return a, fmt.Errorf("offset %q has no unit (write 250ms or 0.25s)", fields[0])
	case err != nil:
		return a, fmt.Errorf("offset %q is not a duration (write 250ms or 0.25s)", fields[0])
	case d < 0:
		return a, fmt.Errorf("offset %v < 0", d)
	}
	a.At = d
	for i, name := range []string{"prompt tokens", "max tokens"} {
		if len(fields) <= i+1 {
			break
		}
		n, err := strconv.Atoi(fields[i+1])
		limit := []int{MaxReplayPromptTokens, MaxReplayMaxTokens}[i]
		if isDigits(fields[i+1]) && (err != nil || n > limit) {
			return a, fmt.Errorf("%s %s: above the limit of %d", name, fields[i+1], limit)
		}
		if err != nil || n < 1 {
			return a, fmt.Errorf("%s %q: want a whole number >= 1", name, fields[i+1])
		}
		if i == 0 {
			a.PromptTokens = n
		} else {
			a.MaxTokens = n
		}
	}
	return a, nil
}

// isDigits reports whether s is a whole number written in decimal digits
// (with an optional +), however large.
func isDigits(s string) bool {
	s = strings.TrimPrefix(s, "+")
	return s != "" && strings.Trim(s, "0123456789") == ""
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// Arrival processes of OpenLoop.Arrivals.
const (
	// ArrivalsPoisson spaces requests by exponential gaps of mean 1/Rate
	// (a Poisson process: independent users).
	ArrivalsPoisson = "poisson"
	// ArrivalsConstant starts request i at exactly i/Rate seconds.
	ArrivalsConstant = "constant"
)

// defaultArrivalSeed is the seed of the Poisson gaps when OpenLoop.Seed is
// 0.
const defaultArrivalSeed = 7

// arrivalStream is the constant PCG stream word of the Poisson gaps
// ("openloop"), so that the gaps of seed s never equal another draw's.
const arrivalStream = 0x6f70656e6c6f6f70

// arrivals yields the scheduled offsets of an open loop, in order: the
// schedule, the replay, or generated ones. It is used up as it yields: make
// a new one (OpenLoop.arrivals) to go through them again.
type arrivals struct {
	n     int           // requests yielded so far
	limit int           // requests (0: none)
	until time.Duration // duration (0: none)

	schedule []time.Duration // a replayed schedule
	replay   []Arrival       // a replayed trace

	constant bool
	rate     float64
	rng      *randv2.Rand
	at       time.Duration // the last generated offset
}

// take returns the offset of the next request (and its index); ok is
// false when the run has sent everything.
func (a *arrivals) take() (i int, at time.Duration, ok bool) {
	i = a.n
	if a.limit > 0 && i >= a.limit {
		return i, 0, false
	}
	switch {
	case a.schedule != nil:
		if i >= len(a.schedule) {
			return i, 0, false
		}
		at = a.schedule[i]
	case a.replay != nil:
		if i >= len(a.replay) {
			return i, 0, false
		}
		at = a.replay[i].At
	case a.constant:
		at = offsetAt(float64(i) * 1e9 / a.rate)
	case i > 0:
		at = a.at + min(offsetAt(a.rng.ExpFloat64()*1e9/a.rate), math.MaxInt64-a.at)
	}
	if a.until > 0 && at >= a.until {
		return i, 0, false
	}
	a.at = at
	a.n++
	return i, at, true
}

// offsetAt rounds nanoseconds to a Duration, saturating instead of
// wrapping.
func offsetAt(ns float64) time.Duration {
	if ns >= math.MaxInt64 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(math.Round(ns))
}

// count is how many requests the arrivals will yield, counting no
// further than upTo (it consumes them).
func (a *arrivals) count(upTo int) int {
	n := 0
	for n < upTo {
		if _, _, ok := a.take(); !ok {
			break
		}
		n++
	}
	return n
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
	req.Messages = []Message{{Role: "user", Content: string(appendNonced(make([]byte, 0, NonceLen+len(text)), nonce, id, text))}}
	req.prompt = r.templates[a.PromptTokens]
	return req, "replay"
}
