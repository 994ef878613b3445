package fit

import (
	"fmt"
	"strings"
)

// DefaultCheckAlpha is the significance level of fit's own check: a KS
// test (records against the replay) with a p-value below it fails.
const DefaultCheckAlpha = 0.01

// Check is fit's own verdict on a profile: whether its replay reproduces
// the records (every KS test of the report at P >= Alpha).
type Check struct {
	// Alpha is the significance level each test was judged at.
	Alpha float64
	// Tests are the tests judged; Failed those with P below Alpha.
	Tests, Failed []Test
}

// OK reports whether the check passed: at least one test, none failed.
// A report with no test (nothing to compare) does not pass.
func (c Check) OK() bool { return len(c.Tests) > 0 && len(c.Failed) == 0 }

// String says the verdict in one line: "fit check passed: 5 KS tests at
// p >= 0.01" or which tests failed, with D and p.
func (c Check) String() string {
	if len(c.Tests) == 0 {
		return "fit check failed: no KS test could be run (no distribution to compare)"
	}
	if c.OK() {
		return fmt.Sprintf("fit check passed: %d KS tests, records against the replay, each at p >= %g", len(c.Tests), c.Alpha)
	}
	parts := make([]string, len(c.Failed))
	for i, t := range c.Failed {
		parts[i] = fmt.Sprintf("%s (D %.3f, p %.2g, n %d)", t.Name, t.D, t.P, t.N)
	}
	return fmt.Sprintf("fit check failed: the profile does not reproduce the records: %d of %d KS tests below p %g: %s",
		len(c.Failed), len(c.Tests), c.Alpha, strings.Join(parts, ", "))
}
