package fit

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tailguard/tailguard/internal/defaults"
	"github.com/tailguard/tailguard/latencytest"
)

// WithMix names the prompt mix the records were measured with (their
// PromptClass names its classes), so that Fit knows how many characters
// each prompt had when the records do not say (Fit uses each record's
// PromptChars instead when every record with usage prompt_tokens has
// it): class PromptTokens × 4 plus the nonce
// (defaults.NonceLen), as latencytest's Batch sends them. Fit then
// fits how the engine's usage prompt_tokens grow with the characters
// (fakeprovider.Prefill's CharsPerToken and TemplateTokens), so the fake
// counts a prompt's tokens as the engine did. Without it, Fit assumes
// latencytest.DefaultMix when every record's class and max_tokens are
// the default mix's, and otherwise that the engine counts characters/4
// (the fake's own count), and says so.
func WithMix(m latencytest.Mix) Option { return func(o *options) { o.mix = &m } }

// promptUnit is how the engine's usage prompt_tokens relate to the fake's
// count of the same prompt (characters/4): usage = template + fake×4/cpt.
type promptUnit struct {
	cpt      float64 // characters per engine token; 4 when unknown
	template int
	desc     string
}

// fitUnit fits the prompt unit: from each record's own prompt
// characters (Record.PromptChars) when every record that reports its
// usage prompt_tokens has them (a prompt's length need not be its
// class's: a replay, a chain's history, a format that counts them),
// else from the records' classes in the mix, saying which in desc.
// Records without usage prompt_tokens tell neither way anything.
func fitUnit(recs []latencytest.Record, mix *latencytest.Mix) promptUnit {
	var pts []unitPoint
	withUsage, withChars := 0, 0
	for _, r := range recs {
		if !r.UsageReported || r.PromptTokens <= 0 {
			continue
		}
		withUsage++
		if r.PromptChars > 0 {
			withChars++
			pts = append(pts, unitPoint{x: float64(r.PromptChars) / 4, y: float64(r.PromptTokens), w: 1})
		}
	}
	if withUsage > 0 && withChars == withUsage {
		return lineUnit(pts, "each record's prompt characters (Record.PromptChars)", fmt.Sprintf("%d records", len(pts)))
	}
	u := fitUnitMix(recs, mix)
	if withChars > 0 {
		u.desc = fmt.Sprintf("from the mix, as %d of %d records with usage prompt_tokens lack their prompt characters: %s", withUsage-withChars, withUsage, u.desc)
	}
	return u
}

// unitPoint is a prompt's fake count (characters/4), the engine's usage
// prompt_tokens for it, and its weight.
type unitPoint struct{ x, y, w float64 }

// lineUnit fits usage = template + slope × fake count by weighted least
// squares (through 0 when the points do not give a line with a positive
// slope and a template above -1: counts of whole tokens, rounded or cut
// down, put a line with no template up to a token low); characters per
// token are 4/slope, refused outside [0.5, 64]. from says where the
// characters came from, n how many points they were.
func lineUnit(pts []unitPoint, from, n string) promptUnit {
	var sw, sx, sy, sxx, sxy float64
	for _, p := range pts {
		sw, sx, sy, sxx, sxy = sw+p.w, sx+p.w*p.x, sy+p.w*p.y, sxx+p.w*p.x*p.x, sxy+p.w*p.x*p.y
	}
	slope, icept := sy/sx, 0.0
	if d := sw*sxx - sx*sx; d > 1e-9*sw*sxx {
		if b := (sw*sxy - sx*sy) / d; b > 0 {
			if a := (sy - b*sx) / sw; a > -1 {
				slope, icept = b, max(a, 0)
			}
		}
	}
	cpt := math.Round(4/slope*1e4) / 1e4
	if !(cpt >= 0.5 && cpt <= 64) {
		return promptUnit{cpt: 4, desc: fmt.Sprintf("usage prompt_tokens against %s give %.3g characters per token, outside [0.5, 64]: ignored; the fake counts characters/4", from, 4/slope)}
	}
	return promptUnit{cpt: cpt, template: int(math.Round(icept)), desc: fmt.Sprintf(
		"the engine's usage prompt_tokens against %s, %s: %.4g characters per token plus %d template tokens; the fake counts a prompt's tokens so",
		from, n, cpt, int(math.Round(icept)))}
}

// fitUnitMix fits the prompt unit from the records' classes and usage:
// each class's characters are its prompt_tokens × 4 plus the nonce.
func fitUnitMix(recs []latencytest.Record, mix *latencytest.Mix) promptUnit {
	unknown := promptUnit{cpt: 4}
	how := "the mix given (fit.WithMix)"
	if mix == nil {
		if !isDefaultMix(recs) {
			unknown.desc = "prompt characters unknown (no mix given, the records are not of latencytest's default mix, and not every record has its prompt characters): the fake counts a prompt's tokens as characters/4, taken to be the engine's usage prompt_tokens; give the mix (fit.WithMix, -mix) when the engine's tokenizer counts otherwise"
			return unknown
		}
		m := latencytest.DefaultMix
		mix, how = &m, "latencytest's default mix (every record's class and max_tokens are its)"
	}
	chars := map[string]int{}
	for _, c := range mix.Classes {
		chars[c.Name] = c.PromptTokens*4 + defaults.NonceLen
	}
	usage := map[string][]float64{}
	for _, r := range recs {
		if n, ok := chars[r.PromptClass]; ok && n > 0 && r.UsageReported && r.PromptTokens > 0 {
			usage[r.PromptClass] = append(usage[r.PromptClass], float64(r.PromptTokens))
		}
	}
	if len(usage) == 0 {
		unknown.desc = "prompt characters unknown: no record with usage prompt_tokens names a class of " + how + "; the fake counts characters/4"
		return unknown
	}
	// Each class's median usage on its fake count (characters/4),
	// weighted by the class's records.
	var pts []unitPoint
	for _, name := range slices.Sorted(maps.Keys(usage)) {
		pts = append(pts, unitPoint{x: float64(chars[name] / 4), y: quantile(usage[name], 0.5), w: float64(len(usage[name]))})
	}
	return lineUnit(pts, fmt.Sprintf("each prompt's characters (class prompt_tokens × 4 + the %d-character nonce, from %s)", defaults.NonceLen, how),
		fmt.Sprintf("%d classes", len(usage)))
}

// isDefaultMix reports whether every measured record names a class of
// latencytest.DefaultMix with that class's max_tokens.
func isDefaultMix(recs []latencytest.Record) bool {
	caps := map[string]int{}
	for _, c := range latencytest.DefaultMix.Classes {
		caps[c.Name] = c.MaxTokens
	}
	for _, r := range recs {
		if cp, ok := caps[r.PromptClass]; !ok || r.MaxTokens != cp {
			return false
		}
	}
	return len(recs) > 0
}

// ParseMix reads a prompt mix as the command line gives it: "default"
// (latencytest.DefaultMix) or comma-separated class=prompt_tokens pairs
// ("short=200,medium=1000,long=6000"), the classes' prompt_tokens as the
// mix that measured the records had them. Only names and prompt sizes
// matter to Fit (weights are spread evenly). A name twice, an empty
// name or a size that is not a whole number of at least 1 is an error.
func ParseMix(s string) (latencytest.Mix, error) {
	if strings.TrimSpace(s) == "default" {
		return latencytest.DefaultMix, nil
	}
	var m latencytest.Mix
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		name, size, ok := strings.Cut(strings.TrimSpace(part), "=")
		n, err := strconv.Atoi(strings.TrimSpace(size))
		name = strings.TrimSpace(name)
		switch {
		case !ok || name == "":
			return latencytest.Mix{}, fmt.Errorf("fit: mix %q: want default or class=prompt_tokens pairs such as short=200,long=6000", s)
		case err != nil || n < 1:
			return latencytest.Mix{}, fmt.Errorf("fit: mix class %q: prompt_tokens %q is not a whole number >= 1", name, size)
		case seen[name]:
			return latencytest.Mix{}, fmt.Errorf("fit: mix class %q given twice", name)
		}
		seen[name] = true
		m.Classes = append(m.Classes, latencytest.PromptClass{Name: name, PromptTokens: n})
	}
	for i := range m.Classes {
		m.Classes[i].Weight = 1 / float64(len(m.Classes))
	}
	return m, nil
}
