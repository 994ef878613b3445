package records

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/tailguard/tailguard/latencytest"
)

// K6 is k6's JSON output (k6 run --out json=FILE): HTTP timings only.
const K6 = "k6"

var k6Format = Format{
	Name:    K6,
	Tool:    "k6",
	Metrics: []string{"total"},
	Keys:    "type+metric+data",
	Detect:  func(s Sniff) bool { return s.Lines && s.Has("type", "metric", "data") },
	Decode:  decodeK6,
	Timed: "HTTP timings only: TTFB = http_req_waiting (from the request sent to the first response byte), total = http_req_duration (sending + waiting + receiving); " +
		"not measured: TTFT, first answer, inter-token gaps (k6 does not read a stream's tokens), token counts; connection setup (http_req_blocked, connecting, TLS) is outside both",
}

type k6Line struct {
	Type   string `json:"type"`
	Metric string `json:"metric"`
	Data   struct {
		Type     string            `json:"type"`
		Contains string            `json:"contains"`
		Time     time.Time         `json:"time"`
		Value    float64           `json:"value"`
		Tags     map[string]string `json:"tags"`
	} `json:"data"`
}

// k6Request is a request being put together from its metric points,
// which k6 writes on consecutive lines (http_reqs first, http_req_failed
// last).
type k6Request struct {
	rec  latencytest.Record
	line int
	key  string
	done bool // its http_req_failed point came: nothing more of it follows
}

// k6Window is how many requests may be open at once: a file whose
// requests have no http_req_failed point (k6 before 0.31) ends each one
// when this many newer ones are open. The requests are added to the Sink
// in the order they began, so memory stays bounded however long the
// file is.
const k6Window = 1024

func decodeK6(r io.Reader, s *Sink) error {
	declared := map[string]string{} // metric -> contains
	open := map[string]*k6Request{} // request key -> its open request
	var queue []*k6Request          // open requests, in the order they began
	lines, made := 0, 0
	// flush adds the requests at the head of the queue that are done, and
	// the oldest while more than k6Window are open (all of them at the
	// end).
	flush := func(all bool) error {
		for len(queue) > 0 && (all || queue[0].done || len(queue) > k6Window) {
			q := queue[0]
			queue[0] = nil
			queue = queue[1:]
			if open[q.key] == q {
				delete(open, q.key)
			}
			if err := addK6(s, q); err != nil {
				return err
			}
		}
		return nil
	}
	err := readLines(r, s, func(b []byte) error {
		n := s.line
		var l k6Line
		if err := json.Unmarshal(b, &l); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		lines++
		switch l.Type {
		case "Metric":
			declared[l.Metric] = l.Data.Contains
			return nil
		case "Point":
		default:
			return fmt.Errorf("line %d: type %q: want a k6 JSON output line (type Metric or Point)", n, l.Type)
		}
		if !strings.HasPrefix(l.Metric, "http_req") {
			return nil
		}
		if l.Metric != "http_reqs" && l.Metric != "http_req_failed" {
			if c, ok := declared[l.Metric]; !ok || c != "time" {
				return fmt.Errorf("line %d: metric %s has no Metric line declaring it a time (contains: time, milliseconds) before its points", n, l.Metric)
			}
		}
		tags, _ := json.Marshal(l.Data.Tags)
		key := l.Data.Time.Format(time.RFC3339Nano) + string(tags)
		q := open[key]
		if q == nil || q.done || (l.Metric == "http_req_duration" && q.rec.Total != latencytest.NotObserved) {
			if q != nil {
				q.done = true // the same key again: a new request
			}
			rec := latencytest.Record{ID: fmt.Sprintf("k6-%05d", made), TTFB: latencytest.NotObserved, Total: latencytest.NotObserved,
				LastToken: latencytest.NotObserved, MaxGap: latencytest.NotObserved}
			made++
			k6Status(&rec, l.Data.Tags)
			q = &k6Request{rec: rec, line: n, key: key}
			open[key] = q
			queue = append(queue, q)
		}
		d, err := inUnit(l.Data.Value, "ms")
		if err != nil && l.Metric != "http_reqs" && l.Metric != "http_req_failed" {
			return fmt.Errorf("line %d: %s: %w", n, l.Metric, err)
		}
		switch l.Metric {
		case "http_req_duration":
			q.rec.Total, q.rec.Start, q.line = d, l.Data.Time.Add(-d), n
		case "http_req_waiting":
			q.rec.TTFB = d
		case "http_req_connecting":
			q.rec.Connect = d
		case "http_req_tls_handshaking":
			q.rec.TLS = d
		case "http_req_failed":
			q.done = true
		}
		return flush(false)
	})
	if err != nil {
		return err
	}
	if err := flush(true); err != nil {
		return err
	}
	if lines == 0 {
		return fmt.Errorf("no line in the file")
	}
	if made == 0 {
		s.Note("the file holds no HTTP request point")
	}
	return nil
}

// addK6 adds a request whose points have all been read.
func addK6(s *Sink, q *k6Request) error {
	rec := &q.rec
	if rec.Total == latencytest.NotObserved {
		if rec.OK() {
			untimed(rec, "k6", "no http_req_duration point")
		}
		rec.Total = 0
	}
	cur := s.line
	s.line = q.line // where Add says the request is: its duration's line
	defer func() { s.line = cur }()
	return s.Add(rec, "")
}

// k6Status fills a request's status and error class from its tags.
func k6Status(rec *latencytest.Record, tags map[string]string) {
	code, _ := strconv.Atoi(tags["status"])
	rec.Status = code
	detail := tags["error"]
	if ec := tags["error_code"]; ec != "" {
		detail = strings.TrimPrefix(detail+" (k6 error_code "+ec+")", " ")
	}
	switch {
	case code == 0:
		rec.Err, rec.Detail = latencytest.ClassTransport, detail
		if rec.Detail == "" {
			rec.Detail = "k6: no response (status 0)"
		}
	case code >= 400 || tags["expected_response"] == "false":
		rec.Err, rec.Detail = latencytest.HTTPClass(code), detail
	}
}
