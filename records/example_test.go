package records_test

import (
	"fmt"
	"strings"

	"github.com/tailguard/tailguard/records"
)

// Import reads another tool's per-request output; a clock the tool did
// not measure (vegeta times HTTP only: no TTFT) counts as failed, never
// as 0.
func ExampleImport() {
	results := `{"seq":0,"code":200,"timestamp":"2025-12-01T10:15:00Z","latency":312500000,"error":""}
{"seq":1,"code":200,"timestamp":"2025-12-01T10:15:00.1Z","latency":250000000,"error":""}
{"seq":2,"code":429,"timestamp":"2025-12-01T10:15:00.2Z","latency":2000000,"error":"429 Too Many Requests"}
`
	// "" detects the format from the keys (vegeta's code, latency, timestamp).
	res, err := records.Import("", strings.NewReader(results))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Counts().Kept, "kept", res.Errors())
	fmt.Println("total p50:", res.Total().Quantile(0.5))
	fmt.Println("TTFT failed:", res.TTFT().Failures(), "of", len(res.TTFT()))
	// Output:
	// 2 kept map[http_429:1]
	// total p50: 312.5ms
	// TTFT failed: 3 of 3
}
