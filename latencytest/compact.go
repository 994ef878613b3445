package latencytest

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/tailguard/tailguard/internal/compact"
)

// RecordMode chooses how a run keeps its records in memory (Batch and
// OpenLoop's RecordMode field).
type RecordMode string

// The record modes.
const (
	// RecordsAuto (the zero value) keeps full records for runs of at most
	// 100,000 planned requests and compact records above.
	RecordsAuto RecordMode = ""
	// RecordsFull keeps every Record whole in Result.Records: every gap,
	// the answer text and every field, about 1 KB a request.
	RecordsFull RecordMode = "full"
	// RecordsCompact keeps what the verdicts need, about 60-80 bytes a
	// request: every clock (TTFT, first answer, last token, total, max
	// gap, TTFB, connection setup, schedule), token count, status, class,
	// detail, trace ID and start time exact, so every figure and verdict
	// but ITL is the same as with full records; the inter-token gaps
	// pooled in a sketch (ITL and Result.ITLQuantile within 1%, Record.Gaps
	// empty); no answer text. Result.Records is nil: All, Len and Record
	// read them.
	RecordsCompact RecordMode = "compact"
)

// compactFor reports whether a run of planned requests keeps compact
// records; the error names a mode that is not one.
func (m RecordMode) compactFor(planned int) (bool, error) {
	switch m {
	case RecordsAuto:
		return planned > compact.Above, nil
	case RecordsFull:
		return false, nil
	case RecordsCompact:
		return true, nil
	}
	return false, fmt.Errorf("record_mode %q is not one of \"\", \"full\", \"compact\"", string(m))
}

// compactStore holds a Result's records compactly (compact.Store): a
// *Record converts to a *compact.Rec, the two having the same fields.
type compactStore struct{ *compact.Store }

func newCompactStore(start time.Time) *compactStore {
	return &compactStore{compact.NewStore(start)}
}

// put encodes rec into slot (safe for concurrent use); a failure that is
// not a cancel adds one Failed to the ITL sketch, as Result.ITL pools it.
func (c *compactStore) put(slot int, rec *Record) {
	c.Put(slot, (*compact.Rec)(rec), !rec.OK() && !cancelled(rec))
}

// append adds rec in a new slot (not for concurrent use with put).
func (c *compactStore) append(rec *Record) { c.put(c.Reserve(1), rec) }

// decode fills rec from slot (Gaps and Content empty: see RecordsCompact).
func (c *compactStore) decode(slot int, rec *Record) { c.Decode(slot, (*compact.Rec)(rec)) }

// clone is a copy that later puts do not change (Until's snapshot).
func (c *compactStore) clone() *compactStore { return &compactStore{c.Clone()} }

// compact.Failed is Failed: the sketch counts failures by it (a
// different value would not compile here).
var _ = [1]struct{}{}[compact.Failed-Failed]

// init gives packages outside latencytest (records' tests and
// benchmarks) a Result's retained bytes without an exported method.
func init() {
	compact.RetainedBytes = func(r any) int { return r.(*Result).retainedBytes() }
}

// recordSize is the size of a Record struct, without what it points to.
const recordSize = int(unsafe.Sizeof(Record{}))
