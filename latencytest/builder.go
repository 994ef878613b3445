package latencytest

import (
	"fmt"
	"math"
	"time"

	"github.com/tailguard/tailguard/internal/compact"
	"github.com/tailguard/tailguard/internal/resultbuild"
)

func init() { resultbuild.New = func() any { return &builder{} } }

// builder builds a Result from records measured elsewhere: package
// records turns another tool's per-request output into Records and adds
// them here (through internal/resultbuild) one at a time, so a file of a million requests never holds a
// million full Records. It keeps full records until 100,000 were
// added, then compact ones (see RecordsCompact: every clock exact, the
// inter-token gaps in a sketch), as a run with RecordsAuto does.
//
// A builder checks nothing: the caller checks each record before Add.
type builder struct {
	res        Result
	start, end time.Time
}

// Add appends a copy of rec, in order.
func (b *builder) Add(rec *Record) {
	if !rec.Start.IsZero() {
		if b.start.IsZero() || rec.Start.Before(b.start) {
			b.start = rec.Start
		}
		if e := rec.Start.Add(max(rec.Total, 0)); e.After(b.end) {
			b.end = e
		}
	}
	if b.res.compact != nil {
		b.res.compact.append(rec)
		return
	}
	b.res.Records = append(b.res.Records, *rec)
	if len(b.res.Records) > compact.Above {
		base := b.start
		if base.IsZero() {
			base = time.Unix(0, 0)
		}
		c := newCompactStore(base)
		for i := range b.res.Records {
			c.append(&b.res.Records[i])
		}
		b.res.compact, b.res.Records = c, nil
	}
}

// Len is the number of records added.
func (b *builder) Len() int { return b.res.Len() }

// Box fills disclosure box n (1-15) with answer, marked missing or not.
func (b *builder) Box(n int, answer string, missing bool) { b.res.Disclosure.Set(n, answer, missing) }

// Result returns the Result built: every record added, Planned their
// count, Start and End spanning their send and end times (zero when no
// record has a send time), CPUPerWall NaN (the client that measured them
// is not known), and box 2 counting them (with the partial reason when
// partial is not ""). The builder is empty afterwards.
func (b *builder) Result(partial string) *Result {
	res := b.res
	b.res = Result{}
	res.Planned, res.CPUPerWall = res.Len(), math.NaN()
	res.Start, res.End = b.start, b.end
	res.Partial, res.PartialReason = partial != "", partial
	c := res.Counts()
	res.Disclosure.Set(2, countsText(c)+partialNote(res.Partial, res.PartialReason), false)
	return &res
}

// countsText is box 2's counts of records read from a file.
func countsText(c Counts) string {
	s := fmt.Sprintf("%d requests: %d kept, %d discarded (warm-up), %d failed", c.Sent, c.Kept, c.Discarded, c.Failed)
	if c.Cancelled > 0 {
		s += fmt.Sprintf(", %d cancelled on purpose by the client (neither failed nor kept)", c.Cancelled)
	}
	return s
}
