package slospec

import (
	"fmt"
	"maps"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/internal/rerun"
	"github.com/tailguard/tailguard/latencytest"
	"github.com/tailguard/tailguard/sloassert"
)

// RunFile loads the spec at path (LoadSpec) and runs it (Spec.Run). An
// invalid spec fails the test at once.
func RunFile(t *testing.T, path string) {
	t.Helper()
	s, err := LoadSpec(path)
	if err != nil {
		t.Fatalf("%v", err)
	}
	s.Run(t)
}

// Run runs the spec under t:
//
//   - with a records target, no load: the records are merged by level
//     (latencytest.MergeLevels), and each level is judged as below, one
//     subtest per level and per objective (see Spec's Records);
//   - the load, when there are objectives: a latencytest.Sweep over the
//     levels, run with Sweep.Measure: one subtest per concurrency level
//     ("c8") that measures the batch as Batch.Measure does (records and
//     summary written to the subtest's artifact directory, kept with go
//     test -artifacts), then one subtest per objective ("c8/ttft_p99")
//     that judges it with Check, so each objective passes or fails on its
//     own with the whole failure screen; the combined report is logged;
//   - the chains, when set: a "chains" subtest, measured with
//     Chain.Measure, then a subtest per chain objective, judged with
//     Check (task_per_call with Check, on the chains' calls).
//
// A fake target (preset or profile) runs in virtual time: each batch, and
// the chains, inside its own synctest bubble with a fresh fake (so every
// level starts from the same state), and the subtests are created outside
// the bubbles. An endpoint target runs in real time, within the test's
// deadline (Measure stops starting requests before go test -timeout; a
// level that ends early fails the spec, and the levels after it do not
// run). When an endpoint's environment variables are unset, Run skips the
// test and names them.
func (s Spec) Run(t *testing.T) {
	t.Helper()
	title := s.title()
	if len(s.Objectives) == 0 && (s.Chains == nil || len(s.Chains.Objectives) == 0) {
		t.Fatalf("slospec: spec %s: no objectives: a spec with no objective never passes", title)
	}
	main, chains, skip, err := s.targets()
	if err != nil {
		t.Fatalf("slospec: spec %s: %v", title, err)
	}
	if skip != "" {
		t.Skipf("slospec: spec %s: %s", title, skip)
	}
	var verdicts []string
	switch {
	case len(s.Objectives) > 0 && main.records != "":
		verdicts = s.runRecords(t, title, main)
	case len(s.Objectives) > 0:
		verdicts = s.runLoad(t, title, main)
	}
	if s.Chains != nil && len(s.Chains.Objectives) > 0 && chains.records != "" {
		t.Fatalf("slospec: spec %s: chains need a live target (preset, profile or endpoint): records hold each call, not the measured chain totals", title)
	}
	if s.Chains != nil && len(s.Chains.Objectives) > 0 {
		verdicts = append(verdicts, s.runChains(t, title, chains))
	}
	t.Logf("spec %s (%s): %s", title, main.desc, strings.Join(verdicts, "; "))
}

func (s Spec) title() string {
	switch {
	case s.Name != "":
		return s.Name
	case s.Path != "":
		return s.Path
	}
	return "(unnamed)"
}

// runTarget is a resolved target: a fake profile, an endpoint provider, or
// a glob of records.
type runTarget struct {
	fake     *fakeprovider.Profile
	provider latencytest.Provider
	records  string
	format   string // the records' format ("" for this package's own)
	desc     string
	protocol string // what a fake is spoken to in (Chains.Protocol; "" is chat)
	// onFake, when set, is called by measure with each new fake.
	onFake func(f *fakeprovider.Fake)
}

// targets resolves the load's and the chains' targets; skip says why the
// spec cannot run here (endpoint variables unset).
func (s Spec) targets() (main, chains runTarget, skip string, err error) {
	main, skip, err = s.Target.resolve()
	if err != nil || skip != "" {
		return
	}
	chains = main
	if s.Chains != nil && s.Chains.Target != nil {
		chains, skip, err = s.Chains.Target.resolve()
	}
	return
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

// EnvReplayProfile names the environment variable that replays an
// endpoint target against a fakeprovider profile in virtual time instead
// of calling the endpoint: typically a profile fitted from the failing
// run's own records (fakellm fit records.jsonl), so a failure against a
// real endpoint can be studied locally, instantly and deterministically.
// A failing endpoint level's report prints the command.
const EnvReplayProfile = "TAILGUARD_REPLAY_PROFILE"

// endpointReplay is the command that fits a profile to a real-time
// level's raw records and reruns the test against it, or "" when the
// records were not written.
func endpointReplay(t *testing.T, res *latencytest.Result) string {
	records := strings.TrimSpace(strings.SplitN(res.Disclosure.Box(3).Answer, " (", 2)[0])
	rerun := rerun.Command(t)
	if !strings.HasSuffix(records, ".jsonl") || rerun == "" {
		return ""
	}
	return fmt.Sprintf("go run github.com/tailguard/tailguard/cmd/fakellm fit %s > /tmp/replay.yaml && %s (the records outlive the test with go test -artifacts)",
		records, strings.Replace(rerun, "&& go test", "&& "+EnvReplayProfile+"=/tmp/replay.yaml go test", 1))
}

// Vars returns the names of the base URL, API key and model variables,
// defaults applied.
func (e Endpoint) Vars() (baseURL, apiKey, model string) {
	baseURL, apiKey, model = e.BaseURLEnv, e.APIKeyEnv, e.ModelEnv
	defBase, defKey, defModel := latencytest.EnvBaseURL, latencytest.EnvAPIKey, latencytest.EnvModel
	if e.Protocol == ProtocolMessages {
		defBase, defKey, defModel = latencytest.EnvAnthropicBaseURL, latencytest.EnvAnthropicAPIKey, latencytest.EnvAnthropicModel
	}
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

// Missing names the variables that keep the endpoint from running: the
// base URL and model when unset or empty, the API key when unset (set it
// empty for a local server that needs none).
func (e Endpoint) Missing() []string {
	baseVar, keyVar, modelVar := e.Vars()
	var missing []string
	if os.Getenv(baseVar) == "" {
		missing = append(missing, baseVar)
	}
	if _, ok := os.LookupEnv(keyVar); !ok {
		missing = append(missing, keyVar)
	}
	if os.Getenv(modelVar) == "" {
		missing = append(missing, modelVar)
	}
	return missing
}

// resolve reads the endpoint from the environment; skip names the unset
// variables.
func (e Endpoint) resolve() (runTarget, string, error) {
	if missing := e.Missing(); len(missing) > 0 {
		return runTarget{}, fmt.Sprintf("endpoint target: %s not set (the API key may be set empty for a local server); skipping",
			strings.Join(missing, ", ")), nil
	}
	baseVar, keyVar, modelVar := e.Vars()
	base, key, model := os.Getenv(baseVar), os.Getenv(keyVar), os.Getenv(modelVar)
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return runTarget{}, "", fmt.Errorf("%s is not an http(s) URL (its value is not shown: it may hold a secret)", baseVar)
	}
	// An empty key is no key (WithAPIKey("") sends none).
	withModel, withKey := latencytest.WithModel(model), latencytest.WithAPIKey(key)
	var p latencytest.Provider
	switch e.Protocol {
	case ProtocolResponses:
		p = latencytest.Responses(base, withModel, withKey)
	case ProtocolMessages:
		if path := strings.TrimRight(u.Path, "/"); !strings.HasSuffix(path, "/v1") {
			u.Path, u.RawPath = path+"/v1", ""
		}
		p = latencytest.Anthropic(u.String(), withModel, withKey)
	default:
		p = latencytest.OpenAI(base, withModel, withKey)
	}
	proto := e.Protocol
	if proto == "" {
		proto = ProtocolChat
	}
	return runTarget{provider: p, desc: fmt.Sprintf("endpoint $%s (%s), model %s, real time", baseVar, proto, model)}, "", nil
}

// measure calls fn with a provider for the target: for a fake, inside a
// new synctest bubble with a new fake, closed when fn returns.
func (rt runTarget) measure(t *testing.T, fn func(t *testing.T, p latencytest.Provider)) {
	t.Helper()
	if rt.fake == nil {
		fn(t, rt.provider)
		return
	}
	prof := *rt.fake
	synctest.Test(t, func(t *testing.T) {
		f := fakeprovider.New(prof)
		defer f.Close()
		if rt.onFake != nil {
			rt.onFake(f)
		}
		fn(t, fakeClient(rt.protocol, f))
	})
}

// runLoad runs the load level by level, as a latencytest.Sweep whose
// levels each measure the target (rt.measure) and are judged in their
// subtest; it returns a verdict per level.
func (s Spec) runLoad(t *testing.T, title string, rt runTarget) []string {
	t.Helper()
	objs := make([]sloassert.Objective, len(s.Objectives))
	for i, o := range s.Objectives {
		objs[i] = o.Objective()
	}
	levels := s.Load.Levels()
	var verdicts []string
	sw := latencytest.Sweep{Batch: s.Load.Batch, Levels: levels}
	sw.Label = ""
	sw.EachLevel = func(tb testing.TB, level int, measure func(testing.TB, latencytest.Provider) *latencytest.Result) {
		t := tb.(*testing.T) // Sweep.Measure passes a *testing.T its own
		name := fmt.Sprintf("c%d", level)
		var res *latencytest.Result
		rt.measure(t, func(t *testing.T, p latencytest.Provider) { res = measure(t, p) })
		if res == nil {
			t.Fatalf("slospec: spec %s: %s: the batch did not run", title, name)
		}
		verdicts = append(verdicts, s.judgeLevel(t, title, rt, name, res, levels, objs))
	}
	sr := sw.Measure(t, nil)
	ran := len(sr.Levels)
	switch {
	case ran < len(levels) && (ran == 0 || !sr.Results[ran-1].Partial):
		verdicts = append(verdicts, fmt.Sprintf("c%d did not run", levels[ran]))
	case ran > 0 && sr.Results[ran-1].Partial:
		name, res := fmt.Sprintf("c%d", sr.Levels[ran-1]), sr.Results[ran-1]
		if rest := levels[ran:]; len(rest) > 0 {
			t.Errorf("slospec: spec %s: %s ended early (%s); levels %v not run", title, name, res.PartialReason, rest)
		} else {
			t.Errorf("slospec: spec %s: %s ended early (%s)", title, name, res.PartialReason)
		}
	}
	return verdicts
}

// judgeLevel judges one level's result with every objective, one subtest
// each, and writes its report; it returns the level's verdict.
func (s Spec) judgeLevel(t *testing.T, title string, rt runTarget, name string, res *latencytest.Result, levels []int, objs []sloassert.Objective) string {
	t.Helper()
	discloseLevels(&res.Disclosure, levels)
	rep := sloassert.Evaluate(res, objs...)
	rep.Title = title + " " + name
	rep.Replay = rerun.Replay(t, res.Start)
	if rep.Replay == "" && rt.provider != nil { // a real endpoint: replay against a profile fitted to its records
		rep.Replay = endpointReplay(t, res)
	}
	sloassert.WriteReport(t, res, rep) // charts, report.md, the job summary
	for j, o := range s.Objectives {
		t.Run(o.Key, func(t *testing.T) {
			checkRow(t, objectiveOrigin(title, rt, o), rep.Outcomes[j], rep.Title)
		})
	}
	finishLevel(t, rep)
	return levelVerdict(name, rep)
}

// recordsLevel names a level of merged records: "c8", or "all" for
// records that carry no level (an open loop's).
func recordsLevel(level int) string {
	if level == 0 {
		return "all"
	}
	return fmt.Sprintf("c%d", level)
}

// runRecords judges merged records level by level (see Spec's Records);
// it returns a verdict per level.
func (s Spec) runRecords(t *testing.T, title string, rt runTarget) []string {
	t.Helper()
	byLevel, err := s.recordLevels(rt)
	if err != nil {
		t.Fatalf("slospec: spec %s: target records: %v", title, err)
	}
	objs := make([]sloassert.Objective, len(s.Objectives))
	for i, o := range s.Objectives {
		objs[i] = o.Objective()
	}
	have := slices.Sorted(maps.Keys(byLevel))
	levels := have
	if len(s.Load.Concurrency) > 0 {
		levels = slices.Clone(s.Load.Concurrency)
		var extra []int
		for _, l := range have {
			if !slices.Contains(levels, l) {
				extra = append(extra, l)
			}
		}
		if len(extra) > 0 {
			t.Logf("slospec: spec %s: the records also hold concurrency %v, not judged (not in load.concurrency %v)", title, extra, levels)
		}
	}
	var verdicts []string
	for _, level := range levels {
		name := recordsLevel(level)
		res := byLevel[level]
		t.Run(name, func(t *testing.T) {
			if res == nil {
				t.Fatalf("slospec: spec %s: %s: no records at concurrency %d (the records hold %v)", title, name, level, have)
			}
			for _, w := range res.Disclosure.Warnings {
				t.Logf("slospec: spec %s: %s: WARNING: %s", title, name, w)
			}
			if res.Partial {
				t.Errorf("slospec: spec %s: %s: the records are partial (%s)", title, name, res.PartialReason)
			}
			verdicts = append(verdicts, s.judgeLevel(t, title, rt, name, res, levels, objs))
		})
		if res == nil {
			verdicts = append(verdicts, name+" has no records")
		}
	}
	return verdicts
}

// fakeClient is the provider that speaks protocol to fake f.
func fakeClient(protocol string, f *fakeprovider.Fake) latencytest.Provider {
	client, model := latencytest.WithHTTPClient(f.Client()), latencytest.WithModel(f.Profile().Model)
	switch protocol {
	case ProtocolResponses:
		return latencytest.Responses("http://fake/v1", client, model)
	case ProtocolMessages:
		return latencytest.Anthropic("http://fake/v1", client, model)
	}
	return latencytest.OpenAI("http://fake/v1", client, model)
}

// runChains runs the chains; it returns their verdict.
func (s Spec) runChains(t *testing.T, title string, rt runTarget) string {
	t.Helper()
	c := s.Chains.Chain
	out := "chains did not run"
	t.Run("chains", func(t *testing.T) {
		var cr *latencytest.ChainResult
		rt.protocol = s.Chains.Protocol
		rt.onFake = func(f *fakeprovider.Fake) { c.Queueing = f.QueueTime } // the report's queueing split
		rt.measure(t, func(t *testing.T, p latencytest.Provider) { cr = c.Measure(t, p) })
		if cr == nil {
			t.Fatalf("slospec: spec %s: the chains did not run", title)
		}
		if cr.Partial {
			t.Errorf("slospec: spec %s: the chains ended early (%s)", title, cr.PartialReason)
		}
		calls := cr.Calls()
		var chainObjs []sloassert.Objective
		var callObjs []sloassert.Objective
		for _, o := range s.Chains.Objectives {
			if o.IsChain() {
				chainObjs = append(chainObjs, o.ChainObjective())
			} else {
				callObjs = append(callObjs, o.Objective())
			}
		}
		chainRep := sloassert.Evaluate(cr, chainObjs...)
		chainRep.Title = title + " chains"
		callRep := sloassert.Evaluate(calls, callObjs...)
		callRep.Title = title + " chain calls"
		ci, ri := 0, 0
		for _, o := range s.Chains.Objectives {
			out, judgedBy := sloassert.Outcome{}, chainRep.Title
			if o.IsChain() {
				out, ci = chainRep.Outcomes[ci], ci+1
			} else {
				out, ri, judgedBy = callRep.Outcomes[ri], ri+1, callRep.Title
			}
			t.Run(o.Key, func(t *testing.T) {
				checkRow(t, objectiveOrigin(title, rt, o), out, judgedBy)
			})
		}
		ok := true
		if len(chainObjs) > 0 {
			sloassert.WriteReport(t, cr, chainRep)
			ok = finishLevel(t, chainRep) && ok
		}
		if len(callObjs) > 0 {
			sloassert.WriteReport(t, calls, callRep)
			ok = finishLevel(t, callRep) && ok
		}
		out = "chains PASS"
		if !ok {
			out = "chains FAIL"
		}
	})
	return out
}

// checkRow fails an objective's subtest with its row alone: the whole
// screen (distribution, counts, errors, slowest requests) is printed once,
// by the level that judged it (finishLevel).
func checkRow(t *testing.T, origin string, out sloassert.Outcome, judgedBy string) {
	t.Helper()
	if !out.OK {
		t.Errorf("%s\n%s  (the whole report: %s)", origin, out.String(), judgedBy)
	}
}

// finishLevel prints a judged result's report once: as the failure when
// it failed, as a log line (shown with -v) when it passed.
func finishLevel(t *testing.T, rep sloassert.Report) bool {
	t.Helper()
	if rep.OK() {
		t.Logf("%s", strings.TrimRight(rep.String(), "\n"))
		return true
	}
	t.Errorf("%s", strings.TrimRight(rep.String(), "\n"))
	return false
}

// objectiveOrigin says which spec line an objective subtest judges, and against
// what (the target, its seed, virtual or real time).
func objectiveOrigin(title string, rt runTarget, o Objective) string {
	if o.Line > 0 {
		return fmt.Sprintf("spec %s, line %d, %s (%s)", title, o.Line, o.Key, rt.desc)
	}
	return fmt.Sprintf("spec %s, %s (%s)", title, o.Key, rt.desc)
}

// discloseLevels fills disclosure box 8 (load levels) with every level
// the spec runs: each level is measured on its own, so its batch saw one.
func discloseLevels(d *latencytest.Disclosure, levels []int) {
	b := latencytest.Box{N: 8, Question: "load levels", Answer: fmt.Sprintf("concurrency %v, side by side", levels)}
	if len(levels) < 3 {
		b.Answer, b.Missing = fmt.Sprintf("only concurrency %v tested (fewer than three load levels)", levels), true
	}
	for i := range d.Boxes {
		if d.Boxes[i].N == 8 {
			b.Question = d.Boxes[i].Question
			d.Boxes[i] = b
			return
		}
	}
}

// levelVerdict is a level's one-word verdict, with the objectives that failed.
func levelVerdict(name string, rep sloassert.Report) string {
	if rep.OK() {
		return name + " PASS"
	}
	var failed []string
	for _, o := range rep.Failed() {
		failed = append(failed, o.Objective)
	}
	if rep.Problem != "" {
		failed = append(failed, rep.Problem)
	}
	return fmt.Sprintf("%s FAIL (%s)", name, strings.Join(failed, ", "))
}
