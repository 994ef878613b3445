// Reading profiles from YAML: strict decoding, line-numbered errors.

package fakeprovider

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// maxProfileBytes is the largest profile ParseProfile and LoadProfile
// read: 1 MiB.
const maxProfileBytes = 1 << 20

// ParseProfile decodes a YAML profile strictly: an unknown key, a negative
// duration, a probability outside [0,1] (a plain number is a fraction, a
// number with % a percentage), a fraction where a whole number belongs or
// a p99 below the median is an error naming the field and its line. A
// profile larger than 1 MiB is an error.
func ParseProfile(data []byte) (Profile, error) {
	var p Profile
	if len(data) > maxProfileBytes {
		return p, fmt.Errorf("fakeprovider: profile is %d bytes, above the limit of %d (1 MiB)", len(data), maxProfileBytes)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return p, errors.New("fakeprovider: profile is empty")
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil {
		return Profile{}, fmt.Errorf("fakeprovider: profile: %w", yamlError(err, data))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return Profile{}, errors.New("fakeprovider: profile: more than one YAML document")
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err == nil {
		// yaml decodes 1.9 into an int as 1: refuse it instead.
		if err := wholeNumbers(&doc, reflect.TypeFor[Profile](), ""); err != nil {
			return Profile{}, fmt.Errorf("fakeprovider: profile: %w", err)
		}
	}
	if err := p.Validate(); err != nil {
		var fe *fieldError
		if errors.As(err, &fe) {
			var root yaml.Node
			if yaml.Unmarshal(data, &root) == nil {
				if line := lineOf(&root, fe.path); line > 0 {
					return Profile{}, fmt.Errorf("fakeprovider: profile: line %d: %w", line, err)
				}
			}
		}
		return Profile{}, fmt.Errorf("fakeprovider: profile: %w", err)
	}
	return p, nil
}

// LoadProfile reads and parses a YAML profile file (at most 1 MiB; see
// ParseProfile).
func LoadProfile(path string) (Profile, error) {
	file, err := os.Open(path)
	if err != nil {
		return Profile{}, fmt.Errorf("fakeprovider: %w", err)
	}
	defer file.Close()
	data, err := io.ReadAll(io.LimitReader(file, maxProfileBytes+1))
	if err != nil {
		return Profile{}, fmt.Errorf("fakeprovider: %w", err)
	}
	if len(data) > maxProfileBytes {
		return Profile{}, fmt.Errorf("fakeprovider: profile %s is larger than the limit of %d bytes (1 MiB)", path, maxProfileBytes)
	}
	p, err := ParseProfile(data)
	if err != nil {
		return Profile{}, fmt.Errorf("%w (in %s)", err, path)
	}
	return p, nil
}

// yamlError rewrites yaml's messages into ours and names the field each is
// about: "line 3: ttft: negative duration -5s", "line 4: stall.bogus:
// unknown key \"bogus\"".
func yamlError(err error, data []byte) error {
	var root yaml.Node
	_ = yaml.Unmarshal(data, &root) // on a syntax error no field is named
	var le *lineError
	if errors.As(err, &le) {
		if path := fieldAt(&root, le.line, le.col, ""); path != "" {
			return fmt.Errorf("line %d: %s: %s", le.line, path, le.msg)
		}
		return err
	}
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs := make([]string, len(te.Errors))
		for i, m := range te.Errors {
			line, text := 0, ""
			if sub := unknownField.FindStringSubmatch(m); sub != nil {
				m = fmt.Sprintf("line %s: unknown key %q", sub[1], sub[2])
				line, _ = strconv.Atoi(sub[1])
				text = sub[2]
			} else if sub := badValue.FindStringSubmatch(m); sub != nil {
				line, _ = strconv.Atoi(sub[1])
				text = sub[2]
			}
			if path := fieldAt(&root, line, 0, text); path != "" {
				m = strings.Replace(m, ": ", ": "+path+": ", 1)
			}
			msgs[i] = m
		}
		return errors.New(strings.Join(msgs, "; "))
	}
	return err
}

// fieldAt returns the path ("script[1].stall.duration") of the node written
// at line and column or, when col is 0, of the first scalar on line that
// reads text (yaml cuts values over 10 bytes to 7 and "..."); "" when none.
func fieldAt(root *yaml.Node, line, col int, text string) string {
	match := func(n *yaml.Node) bool {
		switch {
		case line == 0 || n.Line != line:
			return false
		case col > 0:
			return n.Column == col
		}
		cut, ok := strings.CutSuffix(text, "...")
		return n.Kind == yaml.ScalarNode && (n.Value == text || ok && len(text) == 10 && strings.HasPrefix(n.Value, cut))
	}
	var walk func(n *yaml.Node, path string) string
	walk = func(n *yaml.Node, path string) string {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				if p := walk(c, path); p != "" {
					return p
				}
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				p := k.Value
				if path != "" {
					p = path + "." + p
				}
				if match(k) || match(v) {
					return p
				}
				if p := walk(v, p); p != "" {
					return p
				}
			}
		case yaml.SequenceNode:
			for i, e := range n.Content {
				p := fmt.Sprintf("%s[%d]", path, i)
				if match(e) {
					return p
				}
				if p := walk(e, p); p != "" {
					return p
				}
			}
		}
		return ""
	}
	return walk(root, "")
}

// strictDecode decodes a mapping into v after checking that every key is
// one of allowed.
func strictDecode(n *yaml.Node, v any, what string, allowed ...string) error {
	if n.Kind != yaml.MappingNode {
		return nodeErr(n, what+": want a map")
	}
	for i := 0; i < len(n.Content); i += 2 {
		k := n.Content[i]
		ok := false
		for _, a := range allowed {
			ok = ok || k.Value == a
		}
		if !ok {
			return nodeErr(k, fmt.Sprintf("unknown key %q in %s", k.Value, what))
		}
	}
	return n.Decode(v)
}

// lineOf finds the line of the value at path ("script[1].stall.duration")
// in a YAML document; 0 when absent.
func lineOf(root *yaml.Node, path string) int {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := 0
	for _, seg := range strings.Split(path, ".") {
		name, idx := seg, -1
		if i := strings.IndexByte(seg, '['); i >= 0 && strings.HasSuffix(seg, "]") {
			name = seg[:i]
			idx, _ = strconv.Atoi(seg[i+1 : len(seg)-1])
		}
		if n.Kind != yaml.MappingNode {
			return line
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == name {
				next = n.Content[i+1]
				line = n.Content[i].Line
			}
		}
		if next == nil {
			return line
		}
		n = next
		if idx >= 0 {
			if n.Kind != yaml.SequenceNode || idx >= len(n.Content) {
				return line
			}
			n = n.Content[idx]
			line = n.Line
		}
	}
	return line
}

var durationType = reflect.TypeFor[time.Duration]()

// wholeNumbers checks that every integer field of t written in n is a
// whole number: yaml would decode replicas: 1.9 as 1. Fields are matched by
// their yaml tags; types decoded by hand (Dist, PrefixCache) have none and
// check their own numbers.
func wholeNumbers(n *yaml.Node, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if err := wholeNumbers(c, t, path); err != nil {
				return err
			}
		}
		return nil
	case yaml.AliasNode:
		if n.Alias != nil {
			return wholeNumbers(n.Alias, t, path)
		}
		return nil
	}
	switch {
	case t == durationType:
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i].Value
			for j := range t.NumField() {
				f := t.Field(j)
				name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
				if name != key || name == "" || name == "-" {
					continue
				}
				p := key
				if path != "" {
					p = path + "." + key
				}
				if err := wholeNumbers(n.Content[i+1], f.Type, p); err != nil {
					return err
				}
			}
		}
	case t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode:
		for i, e := range n.Content {
			if err := wholeNumbers(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case n.Kind == yaml.ScalarNode && (t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64 || t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64):
		if n.ShortTag() != "!!int" {
			return fmt.Errorf("line %d: %s: %s is not a whole number", n.Line, path, n.Value)
		}
	}
	return nil
}

// yamlKeys lists the yaml keys of a struct's fields.
func yamlKeys(t reflect.Type) []string {
	var keys []string
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); name != "" && name != "-" {
			keys = append(keys, name)
		}
	}
	return keys
}

// withProbabilities returns a copy of the mapping n whose values at keys
// are plain fractions, read by parseProbability.
func withProbabilities(n *yaml.Node, what string, keys ...string) (*yaml.Node, error) {
	if n.Kind != yaml.MappingNode {
		return nil, nodeErr(n, what+": want a map")
	}
	out := *n
	out.Content = slices.Clone(n.Content)
	for i := 0; i+1 < len(out.Content); i += 2 {
		if !slices.Contains(keys, out.Content[i].Value) {
			continue
		}
		v := out.Content[i+1]
		f, err := parseProbability(v, "probability")
		if err != nil {
			return nil, err
		}
		out.Content[i+1] = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float",
			Value: strconv.FormatFloat(f, 'g', -1, 64), Line: v.Line, Column: v.Column}
	}
	return &out, nil
}

// parseProbability reads a probability (or another share, named by noun)
// as sloassert specs read percentages, with one difference: a plain number
// is allowed and is a fraction in [0,1] (0.05); a number with % is a
// percentage in [0%,100%] (5%). A plain number above 1 is an error that
// says what to write.
func parseProbability(n *yaml.Node, noun string) (float64, error) {
	if n.Kind != yaml.ScalarNode {
		return 0, nodeErr(n, "want a "+noun+": a fraction such as 0.01 or a percentage such as 1%")
	}
	s := n.Value
	if num, ok := strings.CutSuffix(s, "%"); ok {
		pct, err := strconv.ParseFloat(num, 64)
		if err != nil || math.IsNaN(pct) || math.IsInf(pct, 0) {
			return 0, nodeErr(n, fmt.Sprintf("%q is not a percentage (write a number and %%, such as 1%%)", s))
		}
		if pct < 0 || pct > 100 {
			return 0, nodeErr(n, fmt.Sprintf("%s is outside [0%%, 100%%]", s))
		}
		// Divide in decimal ("1.5e-2"), so 1.5% is exactly the float 0.015.
		f, err := strconv.ParseFloat(num+"e-2", 64)
		if err != nil {
			f = pct / 100
		}
		return f, nil
	}
	var v float64
	if t := n.ShortTag(); (t != "!!int" && t != "!!float") || n.Decode(&v) != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, nodeErr(n, fmt.Sprintf("%q is not a %s (write a fraction such as 0.01 or a percentage such as 1%%)", s, noun))
	}
	if v < 0 {
		return 0, nodeErr(n, fmt.Sprintf("%s %s is negative", noun, s))
	}
	if v > 1 {
		frac, err := strconv.ParseFloat(s+"e-2", 64)
		if err != nil {
			frac = v / 100
		}
		return 0, nodeErr(n, fmt.Sprintf("%s %s is above 1: a plain number is a fraction; write %s%% or %s",
			noun, s, s, strconv.FormatFloat(frac, 'g', -1, 64)))
	}
	return v, nil
}
