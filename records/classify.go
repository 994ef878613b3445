package records

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/tailguard/tailguard/latencytest"
)

// statusRE finds an HTTP status in an error text, in the shapes the
// tools' HTTP clients write it: "status code 429", "HTTP 503",
// "Error code: 401 - {...}" (openai-python), "Client error '401
// Unauthorized' for url ..." (httpx), "401, message='Unauthorized',
// url=..." (aiohttp), "429 Too Many Requests" (Go's net/http status).
var statusRE = regexp.MustCompile(`(?i)(?:status[ _-]?code|status|http(?:/[0-9.]+)?|error code|response code)[^0-9a-z]{0,3}([1-5][0-9][0-9])\b` +
	`|'([1-5][0-9][0-9]) [a-z]` +
	`|\b([1-5][0-9][0-9]), ?message=` +
	`|^([1-5][0-9][0-9]) [A-Za-z]`)

// textStatus is the HTTP status an error text names: one of the shapes
// of statusRE, or a whole reason phrase ("Too Many Requests"); 0 for
// none.
func textStatus(text string) int {
	t := strings.TrimSpace(text)
	for _, m := range statusRE.FindAllStringSubmatch(t, -1) {
		for _, g := range m[1:] {
			if g == "" {
				continue
			}
			if code, err := strconv.Atoi(g); err == nil && http.StatusText(code) != "" {
				return code
			}
		}
	}
	for code := 100; code <= 599; code++ {
		if s := http.StatusText(code); s != "" && strings.EqualFold(s, t) {
			return code
		}
	}
	return 0
}

// classify sets rec's error class from the status the tool recorded
// (code, 0 when none) and its error text: an HTTP status (recorded, or
// named in the text) gives http_<status>; otherwise a timeout, a
// connection failure, a cancellation or a call error, by the text.
func classify(rec *latencytest.Record, code int, text string) {
	if code == 0 {
		code = textStatus(text)
	}
	if code >= 100 && code <= 599 {
		rec.Err, rec.Status = latencytest.HTTPClass(code), code
		return
	}
	rec.Err = textClass(text)
}

// textClass classifies an error text that names no status.
func textClass(text string) string {
	l := strings.ToLower(text)
	switch {
	case strings.Contains(l, "timeout") || strings.Contains(l, "timed out"):
		return latencytest.ClassTotalTimeout
	case strings.Contains(l, "connection refused") || strings.Contains(l, "connection reset") ||
		strings.Contains(l, "cannot connect") || strings.Contains(l, "no such host") || strings.Contains(l, "connecterror"):
		return latencytest.ClassTransport
	case strings.Contains(l, "cancel"):
		return latencytest.ClassCanceled
	}
	return latencytest.ClassCallError
}

// firstLine cuts an error text (often a traceback) to one line of at
// most 200 characters: a Python traceback's last line names the error.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndex(s, "\n"); i >= 0 && strings.HasPrefix(s, "Traceback") {
		s = strings.TrimSpace(s[i+1:])
	} else if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return cut(s, 200)
}

// untimed marks a request the tool recorded without timing as failed,
// with a note.
func untimed(rec *latencytest.Record, tool, missing string) {
	rec.Err = latencytest.ClassCallError
	rec.Detail = tool + " recorded this request without timing (" + missing + ")"
	rec.Notes = append(rec.Notes, "no timing in "+tool+"'s record: counted as failed, not dropped")
	no := latencytest.NotObserved
	rec.TTFT, rec.FirstAnswer, rec.LastToken, rec.MaxGap, rec.TTFB = no, no, no, no, no
}

// notObserved is a record whose clocks are all NotObserved, with id.
func notObserved(id string) latencytest.Record {
	no := latencytest.NotObserved
	return latencytest.Record{ID: id, TTFB: no, TTFT: no, FirstAnswer: no, LastToken: no, MaxGap: no}
}

// seconds converts a time in seconds to a Duration; ok is false for a
// value that is not finite, negative, or above limit seconds (a unit that
// does not fit).
func seconds(v float64, limit float64) (time.Duration, bool) {
	if v != v || v < 0 || v > limit {
		return 0, false
	}
	return time.Duration(v*1e9 + 0.5), true
}

// maxPlausible is the longest request a seconds field may hold (a day).
const maxPlausible = 86400
