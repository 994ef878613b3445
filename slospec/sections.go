// The spec's sections: target, endpoint, load, chains, sample sizes.

package slospec

import (
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/protocol"
	"github.com/tailguard/tailguard/sloassert"
)

// target parses a target map.
func (p *specParser) target(e specEntry) (Target, bool) {
	var t Target
	entries, ok := p.mapping(e.v, e.path, false, []string{"preset", "profile", "endpoint", "records", "format", "seed"}, nil)
	if !ok {
		return t, false
	}
	var kinds []specEntry
	var seed, format *specEntry
	for _, f := range entries {
		switch f.key {
		case "preset":
			kinds = append(kinds, f)
			if name, ok := p.str(f); ok {
				if _, err := fakeprovider.Preset(name); err != nil {
					p.errorf(f.v.Line, f.path, "unknown preset %q (have %s)", name, strings.Join(fakeprovider.Presets(), ", "))
				} else {
					t.Preset = name
				}
			}
		case "profile":
			kinds = append(kinds, f)
			t.Profile, _ = p.str(f)
			t.profileLine, t.profileKey = f.v.Line, f.path
		case "endpoint":
			kinds = append(kinds, f)
			t.Endpoint = p.endpoint(f)
		case "records":
			kinds = append(kinds, f)
			if g, ok := p.str(f); ok {
				if _, err := filepath.Match(strings.ReplaceAll(g, "**", "*"), ""); err != nil {
					p.errorf(f.v.Line, f.path, "%q is not a glob: %v", g, err)
				} else {
					t.Records = g
				}
			}
		case "format":
			format = &f
			t.Format = p.recordsFormat(f)
		case "seed":
			seed = &f
			if v, ok := p.integer(f, 0, math.MaxInt64); ok {
				u := uint64(v)
				t.Seed = &u
			}
		}
	}
	switch {
	case len(kinds) == 0:
		p.errorf(e.k.Line, e.path, "want one of preset, profile, endpoint or records")
		return t, false
	case len(kinds) > 1:
		p.errorf(kinds[1].k.Line, kinds[1].path, "conflicting: %s and %s (a target is one of preset, profile, endpoint or records)", kinds[0].key, kinds[1].key)
		return t, false
	}
	if format != nil && kinds[0].key != "records" {
		p.errorf(format.k.Line, format.path, "a format applies to a records target, not to %s", kinds[0].key)
		return t, false
	}
	if seed != nil && (t.Endpoint != nil || kinds[0].key == "records") {
		p.errorf(seed.k.Line, seed.path, "a seed applies to fake targets (preset, profile), not to %s", map[bool]string{true: "an endpoint", false: "records"}[t.Endpoint != nil])
		return t, false
	}
	return t, true
}

var envVarName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (p *specParser) endpoint(e specEntry) *Endpoint {
	ep := &Endpoint{}
	entries, _ := p.mapping(e.v, e.path, true, []string{"base_url_env", "api_key_env", "model_env", "protocol", "stream"}, nil)
	for _, f := range entries {
		if f.key == "stream" {
			stream, ok := p.boolean(f)
			ep.NoStreaming = ok && !stream
			continue
		}
		name, ok := p.str(f)
		if !ok {
			continue
		}
		if f.key == "protocol" {
			ep.Protocol = p.protocol(f, name)
			continue
		}
		if !envVarName.MatchString(name) {
			p.errorf(f.v.Line, f.path, "%q is not an environment variable name", name)
			continue
		}
		switch f.key {
		case "base_url_env":
			ep.BaseURLEnv = name
		case "api_key_env":
			ep.APIKeyEnv = name
		case "model_env":
			ep.ModelEnv = name
		}
	}
	return ep
}

// field is one key of a section and how its value is parsed into the
// section's Go value. A section's fields, in order, are its key table:
// the keys it allows (and lists, in that order, in an unknown-key error)
// and what each does, written once.
type field[T any] struct {
	key   string
	parse func(p *specParser, f specEntry, dst T)
}

// loadField is a key of latencytest.Load (see loadKey) in a section whose
// Go value holds the Load at at(dst).
func loadField[T any](key string, at func(T) *latencytest.Load) field[T] {
	return field[T]{key, func(p *specParser, f specEntry, dst T) { p.loadKey(f, at(dst)) }}
}

// section checks a map's keys against the table (mapping's strict rules:
// unknown, repeated and non-scalar keys are errors) and returns its
// entries in the order written; ok is false when a key was wrong.
func section[T any](p *specParser, e specEntry, table []field[T]) ([]specEntry, bool) {
	keys := make([]string, len(table))
	for i, f := range table {
		keys[i] = f.key
	}
	return p.mapping(e.v, e.path, false, keys, nil)
}

// parseEntries parses each entry, in the order written, with its key's
// parser from the table.
func parseEntries[T any](p *specParser, entries []specEntry, table []field[T], dst T) {
	for _, f := range entries {
		for _, k := range table {
			if k.key == f.key {
				k.parse(p, f, dst)
				break
			}
		}
	}
}

// entry returns the entry of key, if it was written.
func entry(entries []specEntry, key string) (specEntry, bool) {
	for _, f := range entries {
		if f.key == key {
			return f, true
		}
	}
	return specEntry{}, false
}

func batchLoad(l *Load) *latencytest.Load { return &l.Batch.Load }

// loadTable is the load section's keys.
var loadTable = []field[*Load]{
	{"warmup", func(p *specParser, f specEntry, l *Load) {
		l.Batch.Warmup, _ = p.intIn(f, 0, specMaxRequests)
		l.Batch.NoWarmup = l.Batch.Warmup == 0 // written 0: none (the Go zero value means the default)
	}},
	{"requests", func(p *specParser, f specEntry, l *Load) { l.Batch.Requests, _ = p.intIn(f, 1, specMaxRequests) }},
	{"concurrency", func(p *specParser, f specEntry, l *Load) { l.Concurrency = p.levels(f) }},
	loadField("max_tokens", batchLoad),
	{"mix", func(p *specParser, f specEntry, l *Load) { l.Batch.Mix = p.mix(f) }},
	loadField("prompt", batchLoad),
	loadField("no_nonce", batchLoad),
	loadField("temperature", batchLoad),
	{"interval", func(p *specParser, f specEntry, l *Load) { l.Batch.Interval, _ = p.duration(f, false) }},
	loadField("first_token_timeout", batchLoad),
	loadField("total_timeout", batchLoad),
	loadField("hard_cap", batchLoad),
	{"repeat", func(p *specParser, f specEntry, l *Load) { l.Batch.Repeat, _ = p.intIn(f, 1, specMaxRepeat) }},
	loadField("location", batchLoad),
	loadField("cancel", batchLoad),
}

// load parses the load map.
func (p *specParser) load(e specEntry) Load {
	var l Load
	entries, _ := section(p, e, loadTable)
	p.loadKeys = entries
	parseEntries(p, entries, loadTable, &l)
	prompt, hasPrompt := entry(entries, "prompt")
	mix, hasMix := entry(entries, "mix")
	if hasPrompt && hasMix {
		later := mix
		if prompt.k.Line > mix.k.Line {
			later = prompt
		}
		p.errorf(later.k.Line, later.path, "conflicting: prompt and mix (a fixed prompt replaces the mix: give one)")
	}
	return l
}

// loadKey parses a key of latencytest.Load that the load and chains
// sections share (max_tokens, prompt, no_nonce, temperature, the three
// timeouts, location) into l; other keys are the caller's.
func (p *specParser) loadKey(f specEntry, l *latencytest.Load) {
	switch f.key {
	case "max_tokens":
		l.MaxTokens, _ = p.intIn(f, 1, specMaxTokens)
	case "prompt":
		l.Prompt, _ = p.str(f)
	case "no_nonce":
		l.NoNonce, _ = p.boolean(f)
	case "temperature":
		l.Temperature = p.temperature(f)
	case "first_token_timeout":
		l.FirstTokenTimeout, _ = p.duration(f, false)
	case "total_timeout":
		l.TotalTimeout, _ = p.duration(f, false)
	case "hard_cap":
		l.HardCap, _ = p.duration(f, false)
	case "location":
		l.Location, _ = p.str(f)
	case "cancel":
		l.Cancel = parseCancel(p, f) // conversation.go
	}
}

func (p *specParser) temperature(f specEntry) *float64 {
	v, ok := p.number(f, "a temperature in [0, 2]")
	if !ok {
		return nil
	}
	if v < 0 || v > 2 {
		p.errorf(f.v.Line, f.path, "temperature %g is outside [0, 2]", v)
		return nil
	}
	return &v
}

// levels parses concurrency: a list of levels (or one level).
func (p *specParser) levels(f specEntry) []int {
	if f.v.Kind == yaml.ScalarNode {
		if v, ok := p.intIn(f, 1, specMaxLevel); ok {
			return []int{v}
		}
		return nil
	}
	if f.v.Kind != yaml.SequenceNode || len(f.v.Content) == 0 {
		p.errorf(f.v.Line, f.path, "want a list of concurrency levels such as [1, 8], not %s", nodeDesc(f.v))
		return nil
	}
	var out []int
	seen := map[int]bool{}
	for i, n := range f.v.Content {
		el := specEntry{key: f.key, path: fmt.Sprintf("%s[%d]", f.path, i), k: n, v: n}
		v, ok := p.intIn(el, 1, specMaxLevel)
		if !ok {
			continue
		}
		if seen[v] {
			p.errorf(n.Line, el.path, "level %d given twice", v)
			continue
		}
		seen[v] = true
		out = append(out, v)
	}
	return out
}

// mix parses a prompt mix; weights are percentages summing to 100%.
func (p *specParser) mix(f specEntry) latencytest.Mix {
	var m latencytest.Mix
	entries, ok := p.mapping(f.v, f.path, false, []string{"classes", "seed"}, nil)
	if !ok {
		return m
	}
	hasClasses := false
	for _, g := range entries {
		switch g.key {
		case "seed":
			if v, ok := p.integer(g, 0, math.MaxInt64); ok {
				m.Seed = uint64(v)
			}
		case "classes":
			hasClasses = true
			m.Classes = p.classes(g)
		}
	}
	if !hasClasses {
		p.errorf(f.k.Line, f.path, "want classes (a list of {name, weight, prompt_tokens, max_tokens})")
	}
	return m
}

func (p *specParser) classes(g specEntry) []latencytest.PromptClass {
	if g.v.Kind != yaml.SequenceNode || len(g.v.Content) == 0 {
		p.errorf(g.v.Line, g.path, "want a list of {name, weight, prompt_tokens, max_tokens}, not %s", nodeDesc(g.v))
		return nil
	}
	var out []latencytest.PromptClass
	names := map[string]bool{}
	sum := 0.0
	bad := false
	for i, n := range g.v.Content {
		path := fmt.Sprintf("%s[%d]", g.path, i)
		entries, ok := p.mapping(n, path, false, []string{"name", "weight", "prompt_tokens", "max_tokens"}, nil)
		if !ok {
			bad = true
			continue
		}
		var c latencytest.PromptClass
		var have []string
		for _, h := range entries {
			have = append(have, h.key)
			var ok bool
			switch h.key {
			case "name":
				c.Name, ok = p.str(h)
				if ok && names[c.Name] {
					p.errorf(h.v.Line, h.path, "class %q given twice", c.Name)
					ok = false
				}
				names[c.Name] = true
			case "weight":
				c.Weight, ok = p.percentage(h, 0, 100, false)
				if ok && c.Weight == 0 {
					p.errorf(h.v.Line, h.path, "a weight must be above 0%%")
					ok = false
				}
			case "prompt_tokens":
				c.PromptTokens, ok = p.intIn(h, 1, specMaxPromptTokens)
			case "max_tokens":
				c.MaxTokens, ok = p.intIn(h, 1, specMaxTokens)
			}
			bad = bad || !ok
		}
		for _, k := range []string{"name", "weight", "prompt_tokens", "max_tokens"} {
			if !slices.Contains(have, k) {
				p.errorf(n.Line, path, "missing %s", k)
				bad = true
			}
		}
		sum += c.Weight
		out = append(out, c)
	}
	if !bad && math.Abs(sum-1) > 1e-9 {
		p.errorf(g.k.Line, g.path, "weights sum to %s, not 100%%", percent(sum))
	}
	return out
}

func chainLoad(c *Chains) *latencytest.Load { return &c.Chain.Load }

// chainsTable is the chains section's keys. task is parsed after the
// others (see chains).
var chainsTable = []field[*Chains]{
	{"count", func(p *specParser, f specEntry, c *Chains) { c.Chain.Chains, _ = p.intIn(f, 1, specMaxChains) }},
	{"calls", func(p *specParser, f specEntry, c *Chains) { c.Chain.Length, _ = p.intIn(f, 1, specMaxCalls) }},
	{"concurrency", func(p *specParser, f specEntry, c *Chains) { c.Chain.Concurrency, _ = p.intIn(f, 1, specMaxLevel) }},
	loadField("max_tokens", chainLoad),
	loadField("prompt", chainLoad),
	{"follow_up", func(p *specParser, f specEntry, c *Chains) { c.Chain.FollowUp, _ = p.str(f) }},
	loadField("no_nonce", chainLoad),
	loadField("temperature", chainLoad),
	loadField("first_token_timeout", chainLoad),
	loadField("total_timeout", chainLoad),
	loadField("hard_cap", chainLoad),
	loadField("location", chainLoad),
	loadField("cancel", chainLoad),
	{"target", func(p *specParser, f specEntry, c *Chains) {
		if t, ok := p.target(f); ok {
			c.Target = &t
		}
	}},
	chainKindField("total"),
	chainKindField("error_rate"),
	{"task", func(*specParser, specEntry, *Chains) {}},
	{"protocol", func(p *specParser, f specEntry, c *Chains) {
		if name, ok := p.str(f); ok {
			c.Protocol = p.protocol(f, name)
		}
	}},
	{"tool", func(p *specParser, f specEntry, c *Chains) { p.tool(f, c) }},
}

// chains parses the chains map.
func (p *specParser) chains(e specEntry) *Chains {
	c := &Chains{}
	p.chainsLine = e.k.Line
	table := chainsKeys()
	entries, ok := section(p, e, table)
	if !ok {
		return c
	}
	parseEntries(p, entries, table, c)
	if task, ok := entry(entries, "task"); ok { // after calls and tool, wherever it was written
		kindAt(atChains, "task").parse(p, task, where{chains: c}, &c.Objectives)
	}
	if len(c.Objectives) == 0 && len(p.errs) == 0 {
		p.errorf(e.k.Line, e.path, "no objective judges the chains (want total, error_rate or task)")
	}
	return c
}

// protocol checks a protocol name (one of protocol.Names) and returns it.
func (p *specParser) protocol(f specEntry, name string) protocol.Name {
	if protocol.Lookup(protocol.Name(name)) == nil || name == "" {
		var want []string
		for _, n := range protocol.Names() {
			want = append(want, string(n))
		}
		p.errorf(f.v.Line, f.path, "%q is not a protocol: want %s", name, orList(want))
	}
	return protocol.Name(name)
}

// orList joins names as "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

func (p *specParser) chainTotal(f specEntry, out *[]Objective) {
	entries, ok := p.mapping(f.v, f.path, false, []string{"allow_small_sample", "demonstrate", "refute"}, isQuantileKey)
	if !ok {
		return
	}
	sec := p.quantileSection(entries)
	n := 0
	for _, g := range entries {
		if !isQuantileKey(g.key) {
			continue
		}
		n++
		sec.quantile(p, g, Objective{Key: "chain_total_" + g.key, Line: g.k.Line, Kind: kindChainTotal}, out)
	}
	if n == 0 {
		p.errorf(f.k.Line, f.path, "no objective (want a quantile of chain totals such as p95: 60s)")
	}
}

// tool parses tool: {latency: 200ms} (or a distribution of fakeprovider's,
// {dist: lognormal, median: 200ms, p99: 2s}, with an optional seed) into
// a tool step after each call but the last, a wait of that latency.
func (p *specParser) tool(f specEntry, c *Chains) {
	entries, ok := p.mapping(f.v, f.path, false, []string{"latency", "seed"}, nil)
	if !ok {
		return
	}
	var steps fakeprovider.ToolSteps
	have := false
	for _, g := range entries {
		switch g.key {
		case "seed":
			seed, ok := p.integer(g, 0, math.MaxInt64)
			if !ok {
				return
			}
			steps.Seed = uint64(seed)
		case "latency":
			have = true
			if g.v.Kind == yaml.MappingNode {
				if err := g.v.Decode(&steps.Latency); err != nil {
					p.errorf(g.v.Line, g.path, "%s", lineless(err))
					return
				}
				if err := steps.Validate(); err != nil {
					p.errorf(g.v.Line, g.path, "%s", strings.TrimPrefix(err.Error(), "fakeprovider: tool steps: latency: "))
					return
				}
				break
			}
			d, ok := p.duration(g, true)
			if !ok {
				return
			}
			steps.Latency = fakeprovider.Fixed(d)
		}
	}
	if !have {
		p.errorf(f.k.Line, f.path, "missing latency (want {latency: 200ms})")
		return
	}
	c.Tool, c.ToolLatency = steps, steps.Expected()
	c.Chain.Tool = steps.Wait
}

// lineless is a YAML decoding error without its "line N: " prefix (the
// spec's own error says the line).
func lineless(err error) string {
	s := err.Error()
	if rest, ok := strings.CutPrefix(s, "line "); ok {
		if i := strings.Index(rest, ": "); i > 0 {
			return rest[i+2:]
		}
	}
	return s
}

// task parses task: {budget, tail_tasks} of the chains c into the task
// objective.
func (p *specParser) task(f specEntry, c *Chains, out *[]Objective) {
	entries, ok := p.mapping(f.v, f.path, false, []string{"budget", "tail_tasks"}, nil)
	if !ok {
		return
	}
	t := sloassert.Task{Calls: c.Chain.Length}
	if t.Calls == 0 {
		t.Calls = 10
	}
	var have []string
	for _, g := range entries {
		have = append(have, g.key)
		switch g.key {
		case "budget":
			t.Budget, ok = p.duration(g, true)
		case "tail_tasks":
			t.TailTasks, ok = p.percentage(g, 0, 100, true)
		}
		if !ok {
			return
		}
	}
	for _, k := range []string{"budget", "tail_tasks"} {
		if !slices.Contains(have, k) {
			p.errorf(f.k.Line, f.path, "missing %s (want {budget: 5s, tail_tasks: 5%%})", k)
			return
		}
	}
	t.ToolTime = time.Duration(t.Calls-1) * c.ToolLatency
	if t.Budget > 0 && t.ToolTime >= t.Budget {
		p.errorf(f.k.Line, f.path, "budget %v leaves the calls no time: the tool steps take %v (%d of %v)", t.Budget, t.ToolTime, t.Calls-1, c.ToolLatency)
		return
	}
	if t.Validate() != nil {
		p.errorf(f.k.Line, f.path, "want a positive budget and tail_tasks in (0%%, 100%%)")
		return
	}
	if _, per := t.PerCall(); per <= 0 {
		p.errorf(f.k.Line, f.path, "budget %v over %d calls leaves no time per call", t.Budget, t.Calls)
		return
	}
	p.objective(out, Objective{Key: "task", Line: f.k.Line, Kind: kindTask, Task: t}, f.path)
}

// samples checks that the planned sample can support every quantile
// (each kind's sample rule). With records (a records target, or records
// given to judge) the sample is not planned: its size is known, and
// checked, when it is judged.
func (p *specParser) samples(s *Spec) {
	n0 := s.Load.measured()
	src0 := fmt.Sprintf("load gives %d measured requests a level", n0)
	for _, o := range s.Objectives {
		if s.Target.Records != "" || p.records {
			break
		}
		n, src := n0, src0
		if s.Conversation != nil {
			n, src = conversationSamples(s.Conversation, o) // conversation.go
		}
		k := kindOf(o)
		if k == nil || k.sample == nil {
			continue
		}
		m, q := k.sample(o)
		switch {
		case q == 0: // a turn objective on a kind without the rule
		case m == sloassert.ITL: // ITL pools every gap: its n is not known in advance
		case o.Kind == kindTailRatio:
			if n < sloassert.MinSamples(q) {
				p.errorf(o.Line, "objectives."+o.Key, "p99/p50 needs n >= %d (%s)", sloassert.MinSamples(q), src)
			}
		default:
			p.need(o, q, n, src)
		}
	}
	if s.Chains == nil {
		return
	}
	ch := s.Chains.Chain
	chains, calls := ch.Chains, ch.Length
	if chains == 0 {
		chains = 30
	}
	if calls == 0 {
		calls = 10
	}
	for _, o := range s.Chains.Objectives {
		k := kindOf(o)
		if k == nil || k.sample == nil {
			continue
		}
		if _, q := k.sample(o); o.IsChain() {
			p.need(o, q, chains, fmt.Sprintf("chains.count gives %d chains", chains))
		} else {
			p.need(o, q, chains*calls, fmt.Sprintf("chains give %d calls", chains*calls))
		}
	}
}

// need reports a quantile objective the planned sample n cannot judge.
func (p *specParser) need(o Objective, q float64, n int, src string) {
	key := "objectives." + o.Key
	if (o.IsChain() || o.Kind == kindTaskPerCall) && !isSession(o) {
		key = "chains." + o.Key
	}
	if want := sloassert.MinSamples(q); n < want && !o.AllowSmallSample {
		p.errorf(o.Line, key, "%s needs n >= %d (%s; raise it, or allow_small_sample: true)", sloassert.QuantileName(q), want, src)
		return
	}
	_, upper := sloassert.MinBoundSamples(q, o.Demonstrate)
	lower, _ := sloassert.MinBoundSamples(q, o.Refute)
	for _, c := range []struct {
		name  string
		conf  float64
		need  int
		level float64 // where the budget is assumed to sit, for the planner
	}{
		{"demonstrate", o.Demonstrate, upper, q + (1-q)/2},
		{"refute", o.Refute, lower, 1 - 2*(1-q)},
	} {
		if c.conf > 0 && n < c.need {
			plan := ""
			if c.level > 0 && c.level < 1 {
				plan = fmt.Sprintf("; to decide it at %s you need about %d requests (80%% power with the budget at the true %s)",
					percent(c.conf), sloassert.SampleSize(q, c.conf, 0.8, c.level), sloassert.QuantileName(c.level))
			}
			p.errorf(o.Line, key, "%s at %s on %s needs n >= %d (%s)%s", c.name, percent(c.conf), sloassert.QuantileName(q), c.need, src, plan)
		}
	}
}
