// Importers of the HTTP load tools' results (k6, vegeta): HTTP timings only.

package latencytest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

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

func importK6(r io.Reader) (*importer, error) {
	im := &importer{tool: "k6",
		timed: "HTTP timings only: TTFB = http_req_waiting (from the request sent to the first response byte), total = http_req_duration (sending + waiting + receiving); " +
			"not measured: TTFT, first answer, inter-token gaps (k6 does not read a stream's tokens), token counts; connection setup (http_req_blocked, connecting, TLS) is outside both"}
	declared := map[string]string{} // metric -> contains
	open := map[string]int{}        // request key -> index in recs
	lines := 0
	cut, err := readLines(r, func(n int, b []byte) error {
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
		i, ok := open[key]
		if !ok || (l.Metric == "http_req_duration" && im.recs[i].Total != NotObserved) {
			i = len(im.recs)
			open[key] = i
			im.recs = append(im.recs, Record{ID: fmt.Sprintf("k6-%05d", i), TTFB: NotObserved, Total: NotObserved,
				TTFT: 0, FirstAnswer: 0, LastToken: NotObserved, MaxGap: NotObserved})
			k6Status(&im.recs[i], l.Data.Tags)
		}
		rec := &im.recs[i]
		ms := func() (time.Duration, error) {
			d, err := inUnit(l.Data.Value, "ms")
			if err != nil {
				return 0, fmt.Errorf("line %d: %s: %w", n, l.Metric, err)
			}
			return d, nil
		}
		var d time.Duration
		var err error
		switch l.Metric {
		case "http_req_duration":
			if d, err = ms(); err == nil {
				rec.Total = d
				rec.Start = l.Data.Time.Add(-d)
			}
		case "http_req_waiting":
			if d, err = ms(); err == nil {
				rec.TTFB = d
			}
		case "http_req_connecting":
			if d, err = ms(); err == nil {
				rec.Connect = d
			}
		case "http_req_tls_handshaking":
			if d, err = ms(); err == nil {
				rec.TLS = d
			}
		}
		return err
	})
	if err := im.endLines(cut, err, lines, "line"); err != nil {
		return nil, err
	}
	for i := range im.recs {
		if rec := &im.recs[i]; rec.Total == NotObserved && rec.OK() {
			untimed(rec, "k6", "no http_req_duration point")
			rec.Total = 0
		} else if rec.Total == NotObserved {
			rec.Total = 0
		}
	}
	if len(im.recs) == 0 {
		im.notes = append(im.notes, "the file holds no HTTP request point")
	}
	return im, nil
}

// k6Status fills a request's status and error class from its tags.
func k6Status(rec *Record, tags map[string]string) {
	code, _ := strconv.Atoi(tags["status"])
	rec.Status = code
	detail := tags["error"]
	if ec := tags["error_code"]; ec != "" {
		detail = strings.TrimPrefix(detail+" (k6 error_code "+ec+")", " ")
	}
	switch {
	case code == 0:
		rec.Err, rec.Detail = ClassTransport, detail
		if rec.Detail == "" {
			rec.Detail = "k6: no response (status 0)"
		}
	case code >= 400 || tags["expected_response"] == "false":
		rec.Err, rec.Detail = HTTPClass(code), detail
	}
}

type vegetaLine struct {
	Seq       *uint64         `json:"seq"`
	Attack    string          `json:"attack"`
	Code      *int            `json:"code"`
	Timestamp *time.Time      `json:"timestamp"`
	Latency   json.RawMessage `json:"latency"`
	Error     string          `json:"error"`
	Method    string          `json:"method"`
	URL       string          `json:"url"`
}

func importVegeta(r io.Reader) (*importer, error) {
	im := &importer{tool: "vegeta",
		timed: "HTTP only: total = latency (integer nanoseconds, from the request sent to the response body read); " +
			"not measured: TTFT, first answer, inter-token gaps, token counts, TTFB, connection setup"}
	var small, all int
	cut, err := readLines(r, func(n int, b []byte) error {
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
		id := fmt.Sprintf("vegeta-%05d", len(im.recs))
		if l.Seq != nil {
			id = fmt.Sprintf("vegeta-%05d", *l.Seq)
		}
		rec := Record{ID: id, Start: *l.Timestamp, Total: time.Duration(lat), Status: *l.Code,
			TTFB: NotObserved, LastToken: NotObserved, MaxGap: NotObserved}
		switch {
		case *l.Code == 0:
			rec.Err, rec.Detail = textClass(l.Error), firstLine(l.Error)
			if rec.Err == ClassCallError {
				rec.Err = ClassTransport // no response at all
			}
		case *l.Code >= 400:
			rec.Err, rec.Detail = HTTPClass(*l.Code), firstLine(l.Error)
		case l.Error != "":
			rec.Err, rec.Detail = textClass(l.Error), firstLine(l.Error)
		}
		all++
		if lat > 0 && lat < 1000 {
			small++
		}
		im.recs = append(im.recs, rec)
		return nil
	})
	if err := im.endLines(cut, err, all, "result"); err != nil {
		return nil, err
	}
	if all > 0 && small == all {
		return nil, fmt.Errorf("every latency is under 1µs: vegeta writes nanoseconds; these look like another unit (milliseconds?)")
	}
	return im, nil
}
