package format

import (
	"math"
	"testing"
	"time"
)

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{Duration(1327900 * time.Microsecond), "1327.9ms"},
		{Duration(89670 * time.Millisecond), "89.670s"},
		{Duration(failed), "failed"},
		{In(notObserved, time.Millisecond), "-"},
		{In(1500*time.Millisecond, UnitFor(time.Second, 12*time.Second)), "1.500s"},
		{In(1500*time.Millisecond, UnitFor(time.Second, failed)), "1500.0ms"}, // Failed picks no unit
		{Float(math.NaN(), "%.2f"), "n/a"},
		{Float(math.Inf(1), "%.2f"), "inf"},
		{Float(0.125, "%.2f"), "0.12"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
