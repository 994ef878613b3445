package cost

// WastedShare is Report.wastedShare, for the external tests.
func WastedShare(c Report) float64 { return c.wastedShare() }
