package slospec_test

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/slospec"
)

// Every budget of passing.yaml equals the fixed fake's exact figure, so it
// passes only if every duration, quantile and percentage was read right
// and every run happened in virtual time (a real-clock run could not hit
// 200ms to the nanosecond).
func TestRunFilePassing(t *testing.T) {
	slospec.RunFile(t, "testdata/specs/passing.yaml")
}

// A preset, with its seed replaced, at two levels.
func TestRunFilePreset(t *testing.T) {
	slospec.RunFile(t, "testdata/specs/preset.yaml")
}

// runInner runs f as a test of its own, outside this one, so that a spec
// meant to fail can fail without failing this test. It returns whether
// the inner test passed, whether it was skipped, and its output (go
// test's lines: "--- FAIL: inner/c2/total_p99" and the logs of failed
// tests). Under -failfast it skips the calling test: the inner test's
// failures would count towards it and stop the outer run.
func runInner(t *testing.T, f func(t *testing.T)) (ok, skipped bool, out string) {
	t.Helper()
	if ff := flag.Lookup("test.failfast"); ff != nil && ff.Value.String() == "true" {
		t.Skip("runs a failing test of its own, which -failfast would count")
	}
	tmp, err := os.CreateTemp(t.TempDir(), "stdout")
	if err != nil {
		t.Fatal(err)
	}
	defer tmp.Close()
	stdout := os.Stdout
	os.Stdout = tmp // testing.RunTests writes to os.Stdout as it finds it
	defer func() { os.Stdout = stdout }()
	ok = testing.RunTests(func(string, string) (bool, error) { return true, nil }, []testing.InternalTest{{
		Name: "inner",
		F: func(t *testing.T) {
			defer func() { skipped = t.Skipped() }()
			f(t)
		},
	}})
	os.Stdout = stdout
	b, err := os.ReadFile(tmp.Name())
	if err != nil {
		t.Fatal(err)
	}
	return ok, skipped, string(b)
}

// failedTestNames lists the tests go test reported as failed, once each
// (testing.RunTests honours -count, so under -count=N each fails N times).
func failedTestNames(out string) []string {
	var names []string
	for _, m := range regexp.MustCompile(`--- FAIL: (\S+)`).FindAllStringSubmatch(out, -1) {
		names = append(names, m[1])
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// failing.yaml breaks two objectives by one millisecond and 50 ms and
// keeps two: exactly the broken ones fail, each in its own subtest, with
// the whole failure screen, and the artifacts are named.
func TestRunFileFailing(t *testing.T) {
	ok, skipped, out := runInner(t, func(t *testing.T) { slospec.RunFile(t, "testdata/specs/failing.yaml") })
	if ok || skipped {
		t.Fatalf("failing.yaml: ok %v, skipped %v; output:\n%s", ok, skipped, out)
	}
	want := []string{"inner", "inner/c2", "inner/c2/total_p99", "inner/chains", "inner/chains/chain_total_p50"}
	if got := failedTestNames(out); !slices.Equal(got, want) {
		t.Errorf("failed tests %v, want %v; output:\n%s", got, want, out)
	}
	for _, w := range []string{
		"total p99 <= 349.0ms", "350.0ms", "-1.0ms", // observed 350ms, over by 1ms
		"chain total p50 <= 1700.0ms", "1750.0ms", "-50.0ms",
		"n = 100 measured", "records.jsonl", // the screen names n and the raw records
		"fixed-failing c2: FAIL", // the level's report
		"(the whole report: fixed-failing c2)",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	// One screen per judged result: the objective subtests print their row
	// only, so the distribution appears once for c2 and once for the chains.
	if n := strings.Count(out, "  distribution "); n != 2 {
		t.Errorf("the distribution is printed %d times, want 2:\n%s", n, out)
	}
}

// An endpoint spec whose variables are unset skips, naming them.
func TestRunFileEndpointUnsetSkips(t *testing.T) {
	for _, v := range []string{"TAILGUARD_SPEC_TEST_BASE_URL", "TAILGUARD_SPEC_TEST_API_KEY", "TAILGUARD_SPEC_TEST_MODEL"} {
		t.Setenv(v, "")
		os.Unsetenv(v) // t.Setenv restores it afterwards
	}
	s, err := slospec.LoadSpec("testdata/specs/endpoint.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"TAILGUARD_SPEC_TEST_BASE_URL", "TAILGUARD_SPEC_TEST_API_KEY", "TAILGUARD_SPEC_TEST_MODEL"}
	if got := s.Target.Endpoint.Missing(); !slices.Equal(got, want) {
		t.Errorf("missing %v, want %v", got, want)
	}
	ok, skipped, out := runInner(t, func(t *testing.T) { slospec.RunFile(t, "testdata/specs/endpoint.yaml") })
	if !ok || !skipped {
		t.Errorf("endpoint spec with its variables unset: ok %v, skipped %v; output:\n%s", ok, skipped, out)
	}

	// The key may be set empty (a local server); the URL and model may not.
	t.Setenv("TAILGUARD_SPEC_TEST_API_KEY", "")
	t.Setenv("TAILGUARD_SPEC_TEST_MODEL", "m")
	if got := s.Target.Endpoint.Missing(); !slices.Equal(got, want[:1]) {
		t.Errorf("missing %v, want %v", got, want[:1])
	}
	ok, skipped, _ = runInner(t, func(t *testing.T) { slospec.RunFile(t, "testdata/specs/endpoint.yaml") })
	if !ok || !skipped {
		t.Errorf("endpoint spec without its URL: ok %v, skipped %v", ok, skipped)
	}

	// A URL that is not one fails (it does not skip) and does not print
	// the value, which may hold a secret.
	t.Setenv("TAILGUARD_SPEC_TEST_BASE_URL", "secret-token@nowhere")
	ok, skipped, out = runInner(t, func(t *testing.T) { slospec.RunFile(t, "testdata/specs/endpoint.yaml") })
	if ok || skipped || !strings.Contains(out, "TAILGUARD_SPEC_TEST_BASE_URL is not an http(s) URL") || strings.Contains(out, "secret-token") {
		t.Errorf("bad URL: ok %v, skipped %v; output:\n%s", ok, skipped, out)
	}
}

// With its variables set, an endpoint spec runs in real time against
// whatever they name: here the fake on a loopback socket, with no latency
// to wait for, judged on errors and cache hits only.
func TestRunFileEndpoint(t *testing.T) {
	f := fakeprovider.New(fakeprovider.Profile{Model: "loopback-model", TTFT: fakeprovider.Fixed(time.Duration(0)),
		ITL: fakeprovider.Fixed(time.Duration(0)), OutputTokens: fakeprovider.Fixed(4)})
	defer f.Close()
	srv := fakeprovider.NewServer(f)
	defer srv.Close()
	t.Setenv("TAILGUARD_SPEC_TEST_BASE_URL", srv.URL+"/v1")
	t.Setenv("TAILGUARD_SPEC_TEST_API_KEY", "")
	t.Setenv("TAILGUARD_SPEC_TEST_MODEL", "loopback-model")
	slospec.RunFile(t, "testdata/specs/endpoint.yaml")
	// c1 and c2: 10 warm-up (the default) and 20 measured requests each.
	if n := len(f.Served()); n != 60 {
		t.Errorf("the endpoint served %d requests, want 60", n)
	}
}

// A spec that does not parse, or has no objectives, fails the test.
func TestRunFileInvalid(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(path, []byte("target: {preset: mistral-3-14b}\nobjectives:\n  ttft: {p99: fast}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ok, _, out := runInner(t, func(t *testing.T) { slospec.RunFile(t, path) })
	if ok || !strings.Contains(out, `slospec: line 3: objectives.ttft.p99: "fast" is not a duration`) {
		t.Errorf("bad spec: ok %v; output:\n%s", ok, out)
	}
	ok, _, out = runInner(t, func(t *testing.T) {
		slospec.Spec{Name: "empty", Target: slospec.Target{Preset: "mistral-3-14b"}}.Run(t)
	})
	if ok || !strings.Contains(out, "no objectives") {
		t.Errorf("spec with no objectives: ok %v; output:\n%s", ok, out)
	}
}

// An endpoint spec replays against a profile when TAILGUARD_REPLAY_PROFILE
// names one: virtual time, no endpoint needed; and a failing endpoint
// level's report ends with the command that fits a profile to its records
// and replays it that way.
func TestRunFileEndpointReplay(t *testing.T) {
	for _, v := range []string{"TAILGUARD_SPEC_TEST_BASE_URL", "TAILGUARD_SPEC_TEST_API_KEY", "TAILGUARD_SPEC_TEST_MODEL"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
	t.Setenv(slospec.EnvReplayProfile, "testdata/specs/fixed.profile.yaml")
	// With the endpoint's variables unset the spec would skip: it runs, in
	// virtual time, against the profile.
	ok, skipped, out := runInner(t, func(t *testing.T) { slospec.RunFile(t, "testdata/specs/endpoint.yaml") })
	if !ok || skipped {
		t.Fatalf("replay: ok %v, skipped %v:\n%s", ok, skipped, out)
	}
	t.Setenv(slospec.EnvReplayProfile, "testdata/specs/no-such.yaml")
	if ok, _, out := runInner(t, func(t *testing.T) { slospec.RunFile(t, "testdata/specs/endpoint.yaml") }); ok || !strings.Contains(out, "TAILGUARD_REPLAY_PROFILE") {
		t.Errorf("a missing replay profile: ok %v:\n%s", ok, out)
	}
	os.Unsetenv(slospec.EnvReplayProfile)

	f := fakeprovider.New(fakeprovider.Profile{Model: "loopback-model", TTFT: fakeprovider.Fixed(time.Millisecond),
		ITL: fakeprovider.Fixed(time.Duration(0)), OutputTokens: fakeprovider.Fixed(4)})
	defer f.Close()
	srv := fakeprovider.NewServer(f)
	defer srv.Close()
	t.Setenv("TAILGUARD_SPEC_TEST_BASE_URL", srv.URL+"/v1")
	t.Setenv("TAILGUARD_SPEC_TEST_API_KEY", "")
	t.Setenv("TAILGUARD_SPEC_TEST_MODEL", "loopback-model")
	ok, _, out = runInner(t, func(t *testing.T) { slospec.RunFile(t, "testdata/specs/endpoint-failing.yaml") })
	if ok || !strings.Contains(out, "replay against a profile fitted to this run's records: go run github.com/tailguard/tailguard/cmd/fakellm fit ") ||
		!strings.Contains(out, "TAILGUARD_REPLAY_PROFILE=/tmp/replay.yaml go test -count=1 -run '^inner$/^c1$' .") {
		t.Errorf("no replay command in the failing endpoint report:\n%s", out)
	}
}

// Chains with a tool step and a protocol: the tool time is in every
// chain total, exactly (2750ms passes, 2749ms fails), the calls speak
// Anthropic's Messages API to the fake, and the task takes the tool time
// out of its budget.
func TestRunFileChainsWithTools(t *testing.T) {
	slospec.RunFile(t, "testdata/specs/tools.yaml")
	ok, _, out := runInner(t, func(t *testing.T) { slospec.RunFile(t, "testdata/specs/tools-failing.yaml") })
	if want := []string{"inner", "inner/chains", "inner/chains/chain_total_p50"}; ok || !slices.Equal(failedTestNames(out), want) {
		t.Errorf("tools-failing.yaml: ok %v, failed %v, want %v:\n%s", ok, failedTestNames(out), want, out)
	}
	for _, w := range []string{"chain total p50 <= 2749.0ms", "2750.0ms", "-1.0ms", "chain tools", "/v1/messages"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}

// A fake target whose profile states tool_latency runs its tool steps
// when the spec names none (every chain 5 x 350ms + 4 x 250ms, and the
// task sets 4 x 250ms aside), and a tool: key in the spec replaces it
// (4 x 50ms).
func TestRunFileChainsToolsFromProfile(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want []string
	}{
		{"profile-tools-failing.yaml", []string{"chain total p50 <= 2749.0ms", "2750.0ms", "chain tools", "<= 350.0ms suffices"}},
		{"profile-tools-override-failing.yaml", []string{"chain total p50 <= 1949.0ms", "1950.0ms", "chain tools"}},
	} {
		ok, _, out := runInner(t, func(t *testing.T) { slospec.RunFile(t, "testdata/specs/"+tc.spec) })
		if want := []string{"inner", "inner/chains", "inner/chains/chain_total_p50"}; ok || !slices.Equal(failedTestNames(out), want) {
			t.Errorf("%s: ok %v, failed %v, want %v:\n%s", tc.spec, ok, failedTestNames(out), want, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q:\n%s", tc.spec, w, out)
			}
		}
	}
}

// Chains against a fake: the report splits the time the fake queued the
// calls out of the model time (Chain.Queueing is the fake's QueueTime).
// One slot, two chains of two 350ms calls at once: one chain's calls
// wait 350ms and 350ms, the other's 350ms once.
func TestRunFileChainsQueueing(t *testing.T) {
	ok, _, out := runInner(t, func(t *testing.T) { slospec.RunFile(t, "testdata/specs/queued-failing.yaml") })
	if ok {
		t.Fatalf("queued-failing.yaml passed:\n%s", out)
	}
	for _, w := range []string{"  chain queued ", "350.0ms", "700.0ms"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}

// A level that ends early fails the spec and the levels after it do not
// run: here the test's deadline (go test -timeout, less Measure's margin
// of at least 5s) has passed before the first level starts, so c1 sends
// nothing and c2 never runs.
func TestRunFileEndpointEndsEarly(t *testing.T) {
	f := fakeprovider.New(fakeprovider.Profile{Model: "loopback-model", TTFT: fakeprovider.Fixed(time.Duration(0)),
		ITL: fakeprovider.Fixed(time.Duration(0)), OutputTokens: fakeprovider.Fixed(4)})
	defer f.Close()
	srv := fakeprovider.NewServer(f)
	defer srv.Close()
	t.Setenv("TAILGUARD_SPEC_TEST_BASE_URL", srv.URL+"/v1")
	t.Setenv("TAILGUARD_SPEC_TEST_API_KEY", "")
	t.Setenv("TAILGUARD_SPEC_TEST_MODEL", "loopback-model")
	timeout := flag.Lookup("test.timeout")
	was := timeout.Value.String()
	if err := timeout.Value.Set("1s"); err != nil { // the inner test's deadline: 1s away
		t.Fatal(err)
	}
	ok, skipped, out := runInner(t, func(t *testing.T) { slospec.RunFile(t, "testdata/specs/endpoint.yaml") })
	if err := timeout.Value.Set(was); err != nil {
		t.Fatal(err)
	}
	if ok || skipped {
		t.Fatalf("ok %v, skipped %v:\n%s", ok, skipped, out)
	}
	if got, want := failedTestNames(out), []string{"inner", "inner/c1", "inner/c1/cache_miss", "inner/c1/error_rate"}; !slices.Equal(got, want) {
		t.Errorf("failed tests %v, want %v:\n%s", got, want, out)
	}
	for _, w := range []string{"slospec: spec endpoint: c1 ended early (sent 0 of 30 requests in run 0: the context ended", "); levels [2] not run", "c1 FAIL"} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "inner/c2") {
		t.Errorf("c2 ran:\n%s", out)
	}
	if n := len(f.Served()); n != 0 {
		t.Errorf("the endpoint served %d requests, want 0", n)
	}
}
