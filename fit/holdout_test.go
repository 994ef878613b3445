package fit_test

import (
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/fit"
	"github.com/tailguard/tailguard/latencytest"
)

// split halves records: even and odd requests of each concurrency, or
// even and odd chains.
func split(recs []latencytest.Record) (fitHalf, testHalf []latencytest.Record) {
	seen := map[int]int{}
	for _, r := range recs {
		k := seen[r.Concurrency]
		seen[r.Concurrency]++
		if _, ok := fakeprovider.ChainKey(r.ID); ok {
			k = r.Chain
		}
		if k%2 == 0 {
			fitHalf = append(fitHalf, r)
		} else {
			testHalf = append(testHalf, r)
		}
	}
	return fitHalf, testHalf
}

// heldOut is a KS test of held-out records against a replay of a profile
// fitted on the other half. The fit is an estimate from nFit records, so
// under the null hypothesis the statistic carries three samples' noise:
// the effective size is 1/(1/n + 1/nFit + 1/m) (n tested, m replayed), as
// in a two-sample test of the halves, not the n·m/(n+m) of a fixed
// distribution.
func heldOut(ks fit.KS, nFit int) float64 {
	if ks.N == 0 || ks.M == 0 || nFit == 0 {
		return math.NaN()
	}
	e := math.Sqrt(1 / (1/float64(ks.N) + 1/float64(nFit) + 1/float64(ks.M)))
	return fit.KolmogorovQ((e + 0.12 + 0.11/e) * ks.D)
}

// holdoutPass lists, per preset and cell, the KS tests that pass at 5%
// on the hold-out (the table in docs/fit.md shows every p-value and why
// the others fail); one that stops passing is a regression.
var holdoutPass = map[string][]string{
	"mistral-3-14b c=1":             {"first_answer", "total"},
	"mistral-3-14b c=5":             {"first_answer", "total"},
	"mistral-3-14b c=20":            {"first_answer", "total"},
	"mistral-3-14b-chain chains":    {"first_answer", "total", "chain_total"},
	"gpt-oss-120b c=1":              {"first_answer", "total"},
	"gpt-oss-120b c=5":              {"first_answer", "total"},
	"gpt-oss-120b c=20":             {"first_answer"},
	"llama-4-maverick c=1":          {"first_answer", "total"},
	"llama-4-maverick c=5":          {"first_answer", "total"},
	"llama-4-maverick c=20":         {"first_answer", "total"},
	"llama-4-maverick-chain chains": {"first_answer", "total", "chain_total"},
	"llama-3.3-70b c=1":             {"first_answer", "total"},
}

// loadMisses are the load-cell statistics known to miss 20% (docs/fit.md):
// mistral's c=5 total p95 (1,529 ms) lies in the sparse tail of 75
// requests and the fit gives 1,203 ms (-21%), though the hold-out KS test
// on that cell's totals passes. Fit's TTFT-ITL correlation is one pooled
// value for every load level, which a level's total tail can miss.
var loadMisses = map[string]bool{"mistral-3-14b c=5 total p95": true}

// TestHoldout fits each refitted preset's records on one half (as the
// preset is fitted, hand-set numbers included) and tests the fit against
// the other half, cell by cell, with KS tests at 5% (first answer, total,
// chain total; see heldOut); and checks each preset's c=5 and c=20 p50
// and p95 (first answer and total) within 20% of the raw cells. It logs
// the tables of docs/fit.md.
func TestHoldout(t *testing.T) {
	if testing.Short() {
		t.Skip("replays 30 fits of 20,000 requests (-short)")
	}
	if os.Getenv("TAILGUARD_CALIBRATION") == "separate" {
		t.Skip("TAILGUARD_CALIBRATION=separate: the fits' calibration runs in its own step, without -race")
	}
	var table, load strings.Builder
	table.WriteString("| preset | cell | first answer p | total p | chain total p |\n| --- | --- | --- | --- | --- |\n")
	load.WriteString("| preset | cell | first answer p50 raw / preset | p95 | total p50 raw / preset | p95 |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, pf := range presetFits {
		recs := pf.records(t)
		fitHalf, testHalf := split(recs)
		p, rep, err := fit.Fit(fitHalf, fit.WithModel(pf.name))
		if err != nil {
			t.Fatal(err)
		}
		if pf.adjust != nil {
			pf.adjust(&p, &rep)
		}
		preset, err := fakeprovider.Preset(pf.name)
		if err != nil {
			t.Fatal(err)
		}
		cells := map[string][2][]latencytest.Record{}
		for _, half := range []struct {
			i    int
			recs []latencytest.Record
		}{{0, fitHalf}, {1, testHalf}} {
			for _, r := range half.recs {
				name := fmt.Sprintf("c=%d", max(r.Concurrency, 1))
				if _, ok := fakeprovider.ChainKey(r.ID); ok {
					name = "chains"
				}
				c := cells[name]
				c[half.i] = append(c[half.i], r)
				cells[name] = c
			}
		}
		names := make([]string, 0, len(cells))
		for n := range cells {
			names = append(names, n)
		}
		slices.SortFunc(names, func(a, b string) int { // c=1, c=5, c=20, chains
			num := func(s string) int {
				var c int
				if _, err := fmt.Sscanf(s, "c=%d", &c); err != nil {
					return 1 << 30
				}
				return c
			}
			return num(a) - num(b)
		})
		for _, cell := range names {
			halves := cells[cell]
			onTest, err := fit.Compare(p, halves[1])
			if err != nil {
				t.Fatal(err)
			}
			onFit, err := fit.Compare(p, halves[0])
			if err != nil {
				t.Fatal(err)
			}
			key := pf.name + " " + cell
			var ps []string
			for _, name := range []string{"first_answer", "total", "chain_total"} {
				ks, ok := onTest.Test(name)
				kf, _ := onFit.Test(name)
				if !ok {
					ps = append(ps, "—")
					continue
				}
				pv := heldOut(ks.KS, kf.N)
				mark := "pass"
				if !(pv >= 0.05) {
					mark = "FAIL"
					if slices.Contains(holdoutPass[key], name) {
						t.Errorf("%s: hold-out KS %s p = %.4f, expected to pass at 5%%", key, name, pv)
					}
				}
				ps = append(ps, fmt.Sprintf("%.3f %s (n %d, fit on %d)", pv, mark, ks.N, kf.N))
			}
			fmt.Fprintf(&table, "| %s | %s | %s |\n", pf.name, cell, strings.Join(ps, " | "))

			if cell != "c=5" && cell != "c=20" {
				continue
			}
			all := slices.Concat(halves[0], halves[1])
			full, err := fit.Compare(preset, all)
			if err != nil {
				t.Fatal(err)
			}
			var cols []string
			for _, stat := range []string{"first_answer p50", "first_answer p95", "total p50", "total p95"} {
				s, ok := full.Stat(stat)
				if !ok {
					t.Fatalf("%s: no %s", key, stat)
				}
				diff := s.Replay/s.Records - 1
				if !(math.Abs(diff) <= 0.20) && !loadMisses[key+" "+stat] {
					t.Errorf("%s: preset %s %.0f ms, raw cell %.0f ms (%+.0f%%): not within 20%%", key, stat, s.Replay/1e6, s.Records/1e6, diff*100)
				}
				cols = append(cols, fmt.Sprintf("%.0f / %.0f ms (%+.0f%%)", s.Records/1e6, s.Replay/1e6, diff*100))
			}
			fmt.Fprintf(&load, "| %s | %s | %s |\n", pf.name, cell, strings.Join(cols, " | "))
		}
	}
	// The one preset with raw records that stays hand-made (its calls have
	// no first-token times to fit), against all of them.
	pre, err := fakeprovider.Preset("gpt-oss-120b-chain")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := fit.Compare(pre, loadStudy(t, "results_openai-gpt-oss-120b.json").Chains)
	if err != nil {
		t.Fatal(err)
	}
	var ps []string
	for _, name := range []string{"first_answer", "total", "chain_total"} {
		ks, ok := rep.Test(name)
		if !ok {
			ps = append(ps, "—")
			continue
		}
		mark := "pass"
		if !(ks.P >= 0.05) {
			mark = "FAIL"
			if name == "chain_total" {
				t.Errorf("gpt-oss-120b-chain (hand-made): KS chain_total p = %.4f, expected to pass at 5%%", ks.P)
			}
		}
		ps = append(ps, fmt.Sprintf("%.3f %s (n %d)", ks.P, mark, ks.N))
	}
	fmt.Fprintf(&table, "| gpt-oss-120b-chain (hand-made, against all records) | chains | %s |\n", strings.Join(ps, " | "))
	t.Log("\n" + table.String() + "\n" + load.String())
}
