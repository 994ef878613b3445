package records

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/tailguard/tailguard/latencytest"
)

// Vegeta is vegeta's JSON results, one a line (vegeta encode, or vegeta
// attack ... | vegeta encode).
const Vegeta = "vegeta"

var vegetaFormat = Format{
	Name:    Vegeta,
	Tool:    "vegeta",
	Metrics: []string{"total"},
	Keys:    "code+latency+timestamp",
	Detect:  func(s Sniff) bool { return s.Lines && s.Has("code", "latency", "timestamp") },
	Decode:  decodeVegeta,
	Timed: "HTTP only: total = latency (integer nanoseconds, from the request sent to the response body read); " +
		"not measured: TTFT, first answer, inter-token gaps, token counts, TTFB, connection setup",
}

type vegetaLine struct {
	Seq       *uint64         `json:"seq"`
	Code      *int            `json:"code"`
	Timestamp *time.Time      `json:"timestamp"`
	Latency   json.RawMessage `json:"latency"`
	Error     string          `json:"error"`
}

func decodeVegeta(r io.Reader, s *Sink) error {
	var small, all int
	err := readLines(r, s, func(b []byte) error {
		n := s.line
		var l vegetaLine
		if err := json.Unmarshal(b, &l); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		switch {
		case l.Code == nil:
			return fmt.Errorf("line %d: no \"code\": want a vegeta JSON result (code, timestamp, latency)", n)
		case l.Timestamp == nil:
			return fmt.Errorf("line %d: no \"timestamp\": want a vegeta JSON result", n)
		case l.Latency == nil:
			return fmt.Errorf("line %d: no \"latency\": want a vegeta JSON result", n)
		}
		lat, err := strconv.ParseInt(string(bytes.TrimSpace(l.Latency)), 10, 64)
		if err != nil || lat < 0 {
			return fmt.Errorf("line %d: latency %s: want integer nanoseconds (as vegeta writes them)", n, l.Latency)
		}
		seq := uint64(all)
		if l.Seq != nil {
			seq = *l.Seq
		}
		rec := latencytest.Record{ID: "vegeta-" + pad5(seq), Start: *l.Timestamp, Total: time.Duration(lat),
			TTFB: latencytest.NotObserved, LastToken: latencytest.NotObserved, MaxGap: latencytest.NotObserved}
		switch {
		case *l.Code == 0:
			if rec.Err = textClass(l.Error); rec.Err == latencytest.ClassCallError {
				rec.Err = latencytest.ClassTransport // no response at all
			}
			rec.Detail = firstLine(l.Error)
		case *l.Code >= 400:
			classify(&rec, *l.Code, "")
			rec.Detail = firstLine(l.Error)
		case l.Error != "":
			classify(&rec, 0, l.Error)
			rec.Status = *l.Code
			rec.Detail = firstLine(l.Error)
		default:
			rec.Status = *l.Code
		}
		all++
		if lat > 0 && lat < 1000 {
			small++
		}
		return s.Add(&rec, "")
	})
	if err != nil {
		return err
	}
	if all == 0 {
		return fmt.Errorf("no result in the file")
	}
	if small == all {
		return fmt.Errorf("every latency is under 1µs: vegeta writes nanoseconds; these look like another unit (milliseconds?)")
	}
	return nil
}

// pad5 is n with at least five digits ("00017").
func pad5(n uint64) string {
	s := strconv.FormatUint(n, 10)
	for len(s) < 5 {
		s = "0" + s
	}
	return s
}
