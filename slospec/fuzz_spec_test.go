package slospec_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tailguard/tailguard/slospec"
)

// FuzzParseSpec: ParseSpec never panics; a spec it accepts has at least
// one objective (an empty spec never passes) and a target of exactly one
// kind; every error line names its line ("slospec: line N: ").
func FuzzParseSpec(f *testing.F) {
	files, err := filepath.Glob("testdata/specs/*.yaml")
	if err != nil {
		f.Fatal(err)
	}
	for _, path := range files {
		if strings.HasSuffix(path, ".profile.yaml") {
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(fullSpecYAML))
	for _, s := range []string{
		"",
		"target: {preset: mistral-3-14b}\nobjectives: {error_rate: 1%}\n",
		"target: {endpoint: {}}\nobjectives:\n  ttft: {p99.9: 1s, allow_small_sample: true, refute: 90%}\n",
		"target: {preset: mistral-3-14b}\nchains: {task: {budget: 5s, tail_tasks: 5%}, count: 100}\n",
		"target: {preset: mistral-3-14b}\nobjectives: {error_rate: 1}\n",
		"target: {preset: mistral-3-14b}\nobjectives: {ttft: {p150: 1s}}\n",
		"target: {preset: mistral-3-14b}\nload: {requests: 1000000, repeat: 100}\nobjectives: {ttft: {q0.9999999: 1s, demonstrate: 99.999%}}\n",
		"a: &a [*a]\n",
		"target: {preset: x\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := slospec.ParseSpec(data)
		if err != nil {
			for _, line := range strings.Split(err.Error(), "\n") {
				if !specErrPrefix.MatchString(line) {
					t.Fatalf("error line %q does not start with %q", line, specErrPrefix)
				}
			}
			return
		}
		n := len(s.Objectives)
		if s.Chains != nil {
			n += len(s.Chains.Objectives)
		}
		if n == 0 {
			t.Fatalf("accepted a spec with no objective:\n%q", data)
		}
		kinds := 0
		for _, set := range []bool{s.Target.Preset != "", s.Target.Profile != "", s.Target.Endpoint != nil} {
			if set {
				kinds++
			}
		}
		if kinds != 1 {
			t.Fatalf("accepted a target of %d kinds: %+v", kinds, s.Target)
		}
		for _, o := range s.Objectives {
			if o.IsChain() {
				t.Fatalf("chain objective %s among the load's", o.Key)
			}
			_ = o.Objective().Name
		}
		if s.Chains != nil {
			for _, o := range s.Chains.Objectives {
				_ = o.ChainObjective().Name
				_ = o.Objective().Name
			}
		}
	})
}
