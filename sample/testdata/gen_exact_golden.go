//go:build ignore

// gen_exact_golden writes exact_golden.json: seeded random latency vectors
// and their quantiles (numpy's "linear" method), mean and sample standard
// deviation (numpy's std(ddof=1)), computed exactly with math/big and
// rounded to the nanosecond (half away from zero). It does not use the
// sample package, so it is an independent check of sample.go.
//
// numpy was not available where this was written; the same figures are
// what numpy.quantile(x, q, method="linear") (= numpy.percentile(x,
// 100*q, method="linear")), x.mean() and x.std(ddof=1) give, to within
// float64 rounding. The one float64 step kept on purpose is numpy's:
// h = (n-1)*q is computed in float64, then used exactly.
//
// Run from the repository root:
//
//	go run sample/testdata/gen_exact_golden.go > sample/testdata/exact_golden.json
package main

import (
	"encoding/json"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"slices"
)

type vector struct {
	Name       string    `json:"name"`
	Values     []int64   `json:"values_ns"`
	Q          []float64 `json:"q"`
	Quantile   []int64   `json:"quantile_ns"`
	Mean       int64     `json:"mean_ns"`
	Stddev     int64     `json:"stddev_ns"`
	StddevText string    `json:"stddev_exact_ns"`
}

var qs = []float64{0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1}

func main() {
	r := rand.New(rand.NewPCG(2024, 7))
	var out struct {
		Generator string   `json:"generator"`
		Vectors   []vector `json:"vectors"`
	}
	out.Generator = "go run sample/testdata/gen_exact_golden.go (math/big, exact)"
	gen := func(name string, n int, f func() int64) {
		v := make([]int64, n)
		for i := range v {
			v[i] = f()
		}
		out.Vectors = append(out.Vectors, compute(name, v))
	}
	gen("ttft lognormal around 300ms", 1000, func() int64 {
		return int64(math.Exp(math.Log(3e8) + 0.5*r.NormFloat64()))
	})
	gen("near 1e12ns (16 min) +-1e9", 997, func() int64 {
		return 1e12 + r.Int64N(2e9+1) - 1e9
	})
	gen("heavy tail: 20ms, 5% pareto up to 1e13", 257, func() int64 {
		if r.IntN(20) == 0 {
			return min(int64(2e7/math.Pow(r.Float64()+1e-9, 1.5)), 1e13)
		}
		return 2e7 + r.Int64N(2e6) - 1e6
	})
	gen("ten small", 10, func() int64 { return 1 + r.Int64N(1e6) })
	gen("two", 2, func() int64 { return r.Int64N(1e12) })
	gen("ties: three values", 50, func() int64 { return []int64{5e6, 5e6, 7e6, 9e9}[r.IntN(4)] })
	gen("huge: around 2^53ns (104 days)", 101, func() int64 { return 1<<53 - r.Int64N(1<<40) })

	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(out); err != nil {
		panic(err)
	}
}

func compute(name string, values []int64) vector {
	v := vector{Name: name, Values: values, Q: qs}
	x := slices.Clone(values)
	slices.Sort(x)
	n := len(x)
	for _, q := range qs {
		h := float64(n-1) * q // numpy: virtual index (n-1)q, in float64
		lo := int(math.Floor(h))
		if lo >= n-1 {
			v.Quantile = append(v.Quantile, x[n-1])
			continue
		}
		frac := new(big.Rat).SetFloat64(h)
		frac.Sub(frac, new(big.Rat).SetInt64(int64(lo)))
		d := new(big.Rat).SetInt64(x[lo+1] - x[lo])
		val := new(big.Rat).Add(new(big.Rat).SetInt64(x[lo]), d.Mul(d, frac))
		v.Quantile = append(v.Quantile, round(val))
	}
	sum := new(big.Int)
	for _, e := range x {
		sum.Add(sum, big.NewInt(e))
	}
	mean := new(big.Rat).SetFrac(sum, big.NewInt(int64(n)))
	v.Mean = round(mean)
	ss := new(big.Rat)
	for _, e := range x {
		d := new(big.Rat).Sub(new(big.Rat).SetInt64(e), mean)
		ss.Add(ss, d.Mul(d, d))
	}
	variance := ss.Quo(ss, new(big.Rat).SetInt64(int64(n-1)))
	sd := new(big.Float).SetPrec(256).SetRat(variance)
	sd.Sqrt(sd)
	v.StddevText = sd.Text('f', 6)
	half := new(big.Float).SetPrec(256).SetFloat64(0.5)
	sdi, _ := sd.Add(sd, half).Int(nil) // sd >= 0: floor(sd+0.5)
	v.Stddev = sdi.Int64()
	return v
}

// round rounds to the nearest integer, halves away from zero.
func round(r *big.Rat) int64 {
	q, m := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
	m.Abs(m).Lsh(m, 1)
	if m.Cmp(r.Denom()) >= 0 {
		if r.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q.Int64()
}
