package slospec_test

import (
	"fmt"

	"github.com/tailguard/tailguard/slospec"
)

// A spec is YAML; ParseSpec reads it strictly and builds its objectives.
func ExampleParseSpec_objectives() {
	s, err := slospec.ParseSpec([]byte(`
name: chat
target: {preset: llama-4-maverick}
load: {requests: 300, concurrency: [8]}
objectives:
  ttft: {p99: 1.5s}
  error_rate: 1%
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range s.Objectives {
		fmt.Println(o.Objective().Name)
	}
	// A percent where a fraction belongs is an error with its line.
	_, err = slospec.ParseSpec([]byte("target: {preset: llama-4-maverick}\nobjectives: {error_rate: 0.01}\n"))
	fmt.Println(err)
	// Output:
	// ttft p99 <= 1500.0ms
	// error rate <= 1%
	// slospec: line 2: objectives.error_rate: 0.01 is not a percentage: percentages carry % (write 1% for the fraction 0.01, or 0.01%)
}
