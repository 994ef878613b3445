package captureloop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
)

var regen = flag.Bool("regen", false, "rewrite testdata/vllm-c*.json from the stand-in engine")

// standIn is the engine behind testdata/: vLLM cannot run here, so the
// two "vllm bench serve" files are written from this fake, shaped like
// the CPU engine the fit was once wrong about: TTFT grows 12 s per 1k
// prompt tokens, and stalls (2-6 s, 10%) and 503s (4%) happen only with 4
// requests in flight. Replace testdata/ with your own run.
func standIn() fakeprovider.Profile {
	return fakeprovider.Profile{
		Model:              "llama-3.1-8b-instruct",
		Seed:               2026,
		TTFT:               fakeprovider.LogNormal(150*time.Millisecond, 500*time.Millisecond),
		PrefillPer1kTokens: fakeprovider.Fixed(12 * time.Second),
		ITL:                fakeprovider.LogNormal(40*time.Millisecond, 70*time.Millisecond),
		ITLPerRequest:      true,
		OutputTokens:       fakeprovider.Fixed(32),
		SlotsPerReplica:    8,
		PrefixCache:        fakeprovider.PrefixCache{Disabled: true},
		Load: []fakeprovider.LoadLevel{{
			InFlight: 4,
			TTFT:     fakeprovider.LogNormal(260*time.Millisecond, 900*time.Millisecond),
			Stall:    &fakeprovider.Stall{Probability: 0.10, AfterToken: 4, Duration: fakeprovider.Uniform(2*time.Second, 6*time.Second)},
			Faults:   &fakeprovider.Faults{HTTP503: 0.04},
		}},
	}
}

// vllmFile is the part of vllm bench serve's --save-result --save-detailed
// JSON that tailguard imports (vllm/benchmarks/serve.py: per-request
// arrays in seconds, errors as the HTTP reason phrase).
type vllmFile struct {
	Date           string      `json:"date"`
	Backend        string      `json:"backend"`
	ModelID        string      `json:"model_id"`
	NumPrompts     int         `json:"num_prompts"`
	MaxConcurrency int         `json:"max_concurrency"`
	Completed      int         `json:"completed"`
	Failed         int         `json:"failed"`
	MeanTTFTms     float64     `json:"mean_ttft_ms"`
	InputLens      []int       `json:"input_lens"`
	OutputLens     []int       `json:"output_lens"`
	TTFTs          []float64   `json:"ttfts"`
	ITLs           [][]float64 `json:"itls"`
	Errors         []string    `json:"errors"`
}

// standInRun measures the stand-in with the spec at concurrency c and
// writes what vllm bench serve would have saved.
func standInRun(t *testing.T, c int) []byte {
	t.Helper()
	var out []byte
	synctest.Test(t, func(t *testing.T) {
		prof := standIn()
		f := fakeprovider.New(prof)
		defer f.Close()
		p := latencytest.OpenAI("http://fake/v1", latencytest.WithHTTPClient(f.Client()), latencytest.WithModel(prof.Model))
		b := spec(c)
		b.Label = fmt.Sprintf("vllm-c%d", c)
		b.NoWarmup = true // vLLM saves no warm-up requests
		res, err := b.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		v := vllmFile{Date: "20261201-120000", Backend: "openai-chat", ModelID: prof.Model, NumPrompts: len(res.Records), MaxConcurrency: c}
		sum := 0.0
		sec := func(d time.Duration) float64 { return float64(d.Round(100*time.Microsecond)) / 1e9 }
		for _, r := range res.Records {
			v.InputLens = append(v.InputLens, r.PromptTokens)
			if !r.OK() {
				v.Failed++
				v.OutputLens, v.TTFTs, v.ITLs = append(v.OutputLens, 0), append(v.TTFTs, 0), append(v.ITLs, []float64{})
				v.Errors = append(v.Errors, http.StatusText(r.Status))
				continue
			}
			v.Completed++
			gaps := []float64{}
			for _, g := range r.Gaps.All() {
				gaps = append(gaps, sec(g))
			}
			v.OutputLens, v.TTFTs, v.ITLs = append(v.OutputLens, r.CompletionTokens), append(v.TTFTs, sec(r.TTFT)), append(v.ITLs, gaps)
			v.Errors = append(v.Errors, "")
			sum += sec(r.TTFT)
		}
		v.MeanTTFTms = sum / float64(v.Completed) * 1000
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", " ")
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		out = buf.Bytes()
	})
	return out
}

// TestTestdataIsTheStandIn: testdata/ is what the stand-in engine gives
// (go test -run TestTestdataIsTheStandIn -regen rewrites it).
func TestTestdataIsTheStandIn(t *testing.T) {
	for _, c := range levels {
		got := standInRun(t, c)
		path := filepath.Join("testdata", fmt.Sprintf("vllm-c%d.json", c))
		if *regen {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what the stand-in engine gives (go test -run TestTestdataIsTheStandIn -regen rewrites it)", path)
		}
	}
}
