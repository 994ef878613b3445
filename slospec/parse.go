// The strict YAML parser of specs: scalars, errors with line numbers.

package slospec

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tailguard/tailguard/records"
	"github.com/tailguard/tailguard/sloassert"
	"go.yaml.in/yaml/v3"
)

// specError is one spec error, with the line and the key it is about.
type specError struct {
	Line int
	Key  string
	Msg  string
}

func (e *specError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("slospec: line %d: %s", e.Line, e.Msg)
	}
	return fmt.Sprintf("slospec: line %d: %s: %s", e.Line, e.Key, e.Msg)
}

// specParser collects every error of one spec (up to maxSpecErrors).
type specParser struct {
	errs []error
	// loadKeys are the keys the load section wrote.
	loadKeys []specEntry
	// chainsLine is where the spec wrote chains.
	chainsLine int
	// seen maps an objective key to its line, to report repeats.
	seen map[string]int
	// records is set when the spec judges records given apart from it
	// (JudgeFile): its target is optional and its load is not planned.
	records bool
}

func (p *specParser) errorf(line int, key, format string, args ...any) {
	if len(p.errs) >= maxSpecErrors {
		return
	}
	p.errs = append(p.errs, &specError{Line: max(line, 1), Key: key, Msg: fmt.Sprintf(format, args...)})
}

func (p *specParser) err() error {
	if len(p.errs) == 0 {
		return nil
	}
	return errors.Join(p.errs...)
}

// specEntry is one key of a mapping.
type specEntry struct {
	key  string
	path string // "objectives.ttft.p99"
	k, v *yaml.Node
}

func specPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// nodeDesc describes a node's kind for an error.
func nodeDesc(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a map"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias (*" + n.Value + "); aliases are not supported"
	case yaml.ScalarNode:
		if n.ShortTag() == "!!null" {
			return "nothing"
		}
		return strconv.Quote(n.Value)
	}
	return "nothing"
}

// mapping returns the entries of the map n, in order, reporting a value
// that is not a map, a key that is not a plain string, a repeated key,
// and a key that neither allowed nor extra accepts. A null value is an
// empty map when nullOK.
func (p *specParser) mapping(n *yaml.Node, path string, nullOK bool, allowed []string, extra func(string) bool) ([]specEntry, bool) {
	if nullOK && n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return nil, true
	}
	if n.Kind != yaml.MappingNode {
		p.errorf(n.Line, path, "want a map, not %s", nodeDesc(n))
		return nil, false
	}
	var out []specEntry
	lines := map[string]int{}
	ok := true
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.ShortTag() == "!!null" {
			p.errorf(k.Line, path, "a key must be a plain name, not %s", nodeDesc(k))
			ok = false
			continue
		}
		e := specEntry{key: k.Value, path: specPath(path, k.Value), k: k, v: v}
		if l, dup := lines[k.Value]; dup {
			p.errorf(k.Line, e.path, "repeated key (first at line %d)", l)
			ok = false
			continue
		}
		lines[k.Value] = k.Line
		if !slices.Contains(allowed, k.Value) && (extra == nil || !extra(k.Value)) {
			p.errorf(k.Line, e.path, "unknown key %q (want %s)", k.Value, wantList(allowed, extra != nil))
			ok = false
			continue
		}
		out = append(out, e)
	}
	return out, ok
}

func wantList(allowed []string, quantiles bool) string {
	parts := slices.Clone(allowed)
	if quantiles {
		parts = append([]string{"a quantile such as p50, p99, p99.9 or q0.995"}, parts...)
	}
	switch len(parts) {
	case 0:
		return "nothing here"
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

// scalar returns a scalar's text, reporting anything else.
func (p *specParser) scalar(e specEntry, want string) (string, bool) {
	if e.v.Kind != yaml.ScalarNode || e.v.ShortTag() == "!!null" {
		p.errorf(e.v.Line, e.path, "want %s, not %s", want, nodeDesc(e.v))
		return "", false
	}
	return e.v.Value, true
}

func (p *specParser) str(e specEntry) (string, bool) {
	s, ok := p.scalar(e, "a string")
	if ok && s == "" {
		p.errorf(e.v.Line, e.path, "empty string")
		return "", false
	}
	return s, ok
}

func (p *specParser) boolean(e specEntry) (bool, bool) {
	s, ok := p.scalar(e, "true or false")
	if !ok {
		return false, false
	}
	if e.v.ShortTag() != "!!bool" {
		p.errorf(e.v.Line, e.path, "want true or false, not %q", s)
		return false, false
	}
	var b bool
	if err := e.v.Decode(&b); err != nil {
		p.errorf(e.v.Line, e.path, "want true or false, not %q", s)
		return false, false
	}
	return b, true
}

// integer reads a whole number in [lo, hi].
func (p *specParser) integer(e specEntry, lo, hi int64) (int64, bool) {
	s, ok := p.scalar(e, "a whole number")
	if !ok {
		return 0, false
	}
	var v int64
	if e.v.ShortTag() != "!!int" || e.v.Decode(&v) != nil {
		p.errorf(e.v.Line, e.path, "want a whole number, not %q", s)
		return 0, false
	}
	if v < lo || v > hi {
		p.errorf(e.v.Line, e.path, "%d is outside [%d, %d]", v, lo, hi)
		return 0, false
	}
	return v, true
}

func (p *specParser) intIn(e specEntry, lo, hi int) (int, bool) {
	v, ok := p.integer(e, int64(lo), int64(hi))
	return int(v), ok
}

// number reads a finite plain number (not a percentage, not a duration).
func (p *specParser) number(e specEntry, nodeDesc string) (float64, bool) {
	s, ok := p.scalar(e, nodeDesc)
	if !ok {
		return 0, false
	}
	if strings.HasSuffix(s, "%") {
		p.errorf(e.v.Line, e.path, "%q is a percentage; want %s (a plain number, no %%)", s, nodeDesc)
		return 0, false
	}
	var v float64
	if t := e.v.ShortTag(); (t != "!!int" && t != "!!float") || e.v.Decode(&v) != nil {
		p.errorf(e.v.Line, e.path, "want %s, not %q", nodeDesc, s)
		return 0, false
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		p.errorf(e.v.Line, e.path, "want a finite number, not %q", s)
		return 0, false
	}
	return v, true
}

// duration reads a Go duration string; positive demands > 0, else >= 0.
func (p *specParser) duration(e specEntry, positive bool) (time.Duration, bool) {
	s, ok := p.scalar(e, "a duration such as 250ms")
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		if t := e.v.ShortTag(); t == "!!int" || t == "!!float" {
			p.errorf(e.v.Line, e.path, "%s is not a duration: durations carry a unit (write %sms or %ss)", s, s, s)
		} else {
			p.errorf(e.v.Line, e.path, "%q is not a duration (write a Go duration such as 250ms or 1.5s)", s)
		}
		return 0, false
	}
	if d < 0 {
		p.errorf(e.v.Line, e.path, "negative duration %s", s)
		return 0, false
	}
	if positive && d == 0 {
		p.errorf(e.v.Line, e.path, "a budget must be positive, not %s", s)
		return 0, false
	}
	return d, true
}

// percentage reads "1%" as the fraction 0.01; the percentage must lie in
// [lo, hi] (percent), excluding the ends when open. A bare number is an
// error that says what to write.
func (p *specParser) percentage(e specEntry, lo, hi float64, open bool) (float64, bool) {
	s, ok := p.scalar(e, "a percentage such as 1%")
	if !ok {
		return 0, false
	}
	num, has := strings.CutSuffix(s, "%")
	if !has {
		p.errorf(e.v.Line, e.path, "%s is not a percentage: percentages carry %% (%s)", s, percentHint(s))
		return 0, false
	}
	pct, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(pct) || math.IsInf(pct, 0) {
		p.errorf(e.v.Line, e.path, "%q is not a percentage (write a number and %%, such as 1%%)", s)
		return 0, false
	}
	if pct < lo || pct > hi || open && (pct == lo || pct == hi) {
		lb, rb := "[", "]"
		if open {
			lb, rb = "(", ")"
		}
		p.errorf(e.v.Line, e.path, "%s is outside %s%g%%, %g%%%s", s, lb, lo, hi, rb)
		return 0, false
	}
	// Divide in decimal ("1.5e-2"), so 1.5% is exactly the float 0.015.
	f, err := strconv.ParseFloat(num+"e-2", 64)
	if err != nil {
		f = pct / 100
	}
	return f, true
}

// percentHint says what to write for a bare number s.
func percentHint(s string) string {
	f, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil || math.IsNaN(f) || math.IsInf(f, 0):
		return "write a number and %, such as 1%"
	case f > 0 && f < 1:
		return fmt.Sprintf("write %s%% for the fraction %s, or %s%%", strconv.FormatFloat(f*100, 'g', -1, 64), s, s)
	}
	return fmt.Sprintf("write %s%%", s)
}

// isQuantileKey reports whether key looks like a quantile (p99, q0.995),
// in range or not.
func isQuantileKey(key string) bool { return pKey.MatchString(key) || qKey.MatchString(key) }

// quantile reads a quantile key as a fraction in (0,1).
func (p *specParser) quantile(e specEntry) (float64, bool) {
	var q float64
	var err error
	if m := pKey.FindStringSubmatch(e.key); m != nil {
		q, err = strconv.ParseFloat(m[1]+"e-2", 64) // decimal shift: p99.9 is exactly 0.999
	} else if m := qKey.FindStringSubmatch(e.key); m != nil {
		q, err = strconv.ParseFloat(m[1], 64)
	} else {
		err = errors.New("not a quantile")
	}
	if err != nil || !(q > 0 && q < 1) {
		if strings.HasPrefix(e.key, "q") {
			p.errorf(e.k.Line, e.path, "quantile %s is outside q0-q1 (write a fraction strictly between 0 and 1, such as q0.995)", e.key)
		} else {
			p.errorf(e.k.Line, e.path, "quantile %s is outside p0-p100 (write a percentile strictly between 0 and 100, such as p99 or p99.9)", e.key)
		}
		return 0, false
	}
	return q, true
}

// objective records o, reporting a key given twice.
func (p *specParser) objective(list *[]Objective, o Objective, path string) {
	if p.seen == nil {
		p.seen = map[string]int{}
	}
	if l, dup := p.seen[o.Key]; dup {
		p.errorf(o.Line, path, "objective %s given twice (also at line %d)", o.Key, l)
		return
	}
	p.seen[o.Key] = o.Line
	*list = append(*list, o)
}

// unreadableByte finds the first byte YAML cannot read (invalid UTF-8 or a
// control character) and returns its line, or 0.
func unreadableByte(data []byte) (line int, why string) {
	line = 1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			return line, "invalid UTF-8"
		case r == '\n':
			line++
		case r == '\t' || r == '\r':
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0 && r != 0x85) || r == 0xfffe || r == 0xffff || (r >= 0xd800 && r <= 0xdfff):
			return line, fmt.Sprintf("control character %U", r)
		}
		i += size
	}
	return 0, ""
}

var yamlErrLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// spec parses the whole document.
func (p *specParser) spec(data []byte) Spec {
	var s Spec
	if len(bytes.TrimSpace(data)) == 0 {
		p.errorf(1, "", "empty spec: want target and objectives (an empty spec never passes)")
		return s
	}
	if line, why := unreadableByte(data); line > 0 {
		p.errorf(line, "", "yaml: %s", why)
		return s
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		line, msg := 1, err.Error()
		if m := yamlErrLine.FindStringSubmatch(msg); m != nil {
			line, _ = strconv.Atoi(m[1])
			msg = "yaml: " + m[2]
		} else if errors.Is(err, io.EOF) {
			msg = "empty spec: want target and objectives (an empty spec never passes)"
		}
		p.errorf(line, "", "%s", msg)
		return s
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		p.errorf(max(extra.Line, 1), "", "more than one YAML document")
		return s
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		p.errorf(root.Line, "", "empty spec: want target and objectives (an empty spec never passes)")
		return s
	}
	if root.Kind != yaml.MappingNode {
		p.errorf(root.Line, "", "a spec is a map of name, target, load, objectives and chains, not %s", nodeDesc(root))
		return s
	}
	entries, _ := p.mapping(root, "", false, []string{"name", "target", "load", "objectives", "chains", "agent", "conversation", "server_metrics"}, nil)
	var (
		loadLine, objLine, agentLine, metricsLine int
		hasTarget                                 bool
	)
	for _, e := range entries {
		switch e.key {
		case "name":
			s.Name, _ = p.str(e)
		case "target":
			hasTarget = true
			s.Target, _ = p.target(e)
		case "load":
			loadLine = e.k.Line
			s.Load = p.load(e)
		case "objectives":
			objLine = e.k.Line
			s.Objectives = p.objectives(e)
		case "chains":
			s.Chains = p.chains(e)
		case "agent":
			agentLine = e.k.Line
			s.Agent = parseAgent(p, e)
		case "conversation":
			s.Conversation = parseConversation(p, e)
		case "server_metrics":
			metricsLine, s.ServerMetrics = e.k.Line, serverMetrics(p, e)
		}
	}
	if len(p.errs) > 0 {
		return s
	}
	if !hasTarget && !p.records {
		p.errorf(root.Line, "target", "missing: want one of preset, profile, endpoint or records")
	}
	if line, key, msg := conversationProblem(&s, loadLine, p.records); msg != "" { // conversation.go
		p.errorf(max(line, root.Line), key, "%s", msg)
	}
	if s.Target.Records != "" {
		for _, f := range p.loadKeys {
			if f.key != "concurrency" {
				p.errorf(f.k.Line, f.path, "the load is not run with a records target (the records were measured already): only load.concurrency applies, naming the levels to judge")
			}
		}
	}
	if s.Chains != nil && (s.Chains.Target == nil && s.Target.Records != "" || s.Chains.Target != nil && s.Chains.Target.Records != "") {
		p.errorf(p.chainsLine, "chains", "chains need a live target (preset, profile or endpoint) under chains.target: records hold each call, not the measured chain totals")
	}
	if s.Chains != nil && s.Chains.Protocol != "" {
		t := s.Target
		if s.Chains.Target != nil {
			t = *s.Chains.Target
		}
		if ep := t.Endpoint; ep != nil && s.Chains.Protocol != cmp.Or(ep.Protocol, ProtocolChat) {
			p.errorf(p.chainsLine, "chains.protocol", "%s, but the chains' endpoint target speaks %s (set protocol in the endpoint)", s.Chains.Protocol, cmp.Or(ep.Protocol, ProtocolChat))
		}
	}
	if ep := s.Target.Endpoint; ep != nil && ep.NoStreaming {
		for _, o := range s.Objectives {
			if clock, what := needs(o); clock != "" && clock != string(sloassert.Total) {
				p.errorf(o.Line, "objectives."+o.Key, "%s, but target.endpoint has stream: false: a whole answer has no first token and no gap to time, only its total (drop stream: false, or judge total)", what)
			}
		}
	}
	switch {
	case len(s.Objectives) == 0 && s.Chains == nil && s.Agent == nil:
		line := objLine
		if line == 0 {
			line = root.Line
		}
		p.errorf(line, "objectives", "none: a spec with no objective never passes")
	case len(s.Objectives) == 0 && loadLine > 0:
		p.errorf(loadLine, "load", "no objective judges the load (add objectives, or drop load)")
	}
	checkAgent(p, &s, agentLine)
	checkServerMetrics(p, &s, metricsLine)
	p.samples(&s)
	return s
}

// percent renders a fraction as an exact percent: "1%", "0.5%".
func percent(f float64) string { return fmt.Sprintf("%g%%", math.Round(f*100*1e6)/1e6) }

// resolve makes a target's profile path relative to dir and loads it.
func (p *specParser) resolve(t *Target, dir string) {
	if t.Profile == "" {
		return
	}
	if !filepath.IsAbs(t.Profile) {
		t.Profile = filepath.Join(dir, t.Profile)
	}
	if _, err := t.FakeProfile(); err != nil {
		p.errorf(t.profileLine, t.profileKey, "%v", err)
	}
}

// recordsFormat reads a records target's format key.
func (p *specParser) recordsFormat(f specEntry) string {
	v, ok := p.str(f)
	if !ok {
		return ""
	}
	if !slices.Contains(records.Formats(), v) {
		p.errorf(f.v.Line, f.path, "unknown format %q (have %s)", v, strings.Join(records.Formats(), ", "))
		return ""
	}
	return v
}
