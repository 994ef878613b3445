package servermetrics

import (
	"bytes"
	"errors"
)

// OpenMetrics 1.0 is read with prometheus/common's text-format parser
// after openMetricsToText rewrites the few lines in which the two
// formats differ. prometheus/common's own OpenMetrics decoder (v0.74)
// checks each line against the format's ABNF grammar: it reads these
// texts right, but costs about 4ms of CPU a line (an 80-line text: 350ms,
// so a vLLM endpoint's several hundred lines take seconds of the client's
// CPU per scrape, measured on the 2-core CI machine), and its cost grows
// faster than a line's length, which an endpoint can exploit. The text
// parser reads the same figures in microseconds.
//
// The differences handled, and nothing else:
//   - the text must end with "# EOF" (OpenMetrics requires it: a text
//     without it was cut short), and nothing may follow it;
//   - "# TYPE" of info, stateset and unknown, which the text format
//     lacks, becomes untyped (this package reads none of them);
//   - exemplars (" # {trace_id=...} 0.5") after a sample are dropped;
//   - a sample's timestamp (float seconds in OpenMetrics, integer
//     milliseconds in the text format) is dropped: a scrape's time is
//     the client's.
//
// # UNIT lines and _created samples need no rewriting: the text parser
// takes the first as a comment and the second as a family of its own.

// openMetricsToText rewrites an OpenMetrics text for the text parser.
func openMetricsToText(data []byte) ([]byte, error) {
	body := bytes.TrimRight(data, "\n")
	cut := bytes.LastIndexByte(body, '\n') + 1
	if string(body[cut:]) != "# EOF" {
		return nil, errors.New("servermetrics: parse OpenMetrics: the text does not end with # EOF (cut short?)")
	}
	var out bytes.Buffer
	out.Grow(len(body))
	for line := range bytes.Lines(body[:cut]) {
		line = bytes.TrimRight(line, "\n")
		switch {
		case bytes.Equal(line, []byte("# EOF")):
			return nil, errors.New("servermetrics: parse OpenMetrics: a line follows # EOF")
		case bytes.HasPrefix(line, []byte("# TYPE ")):
			f := bytes.Fields(line)
			if len(f) == 4 && (string(f[3]) == "info" || string(f[3]) == "stateset" || string(f[3]) == "unknown") {
				line = append(append(append([]byte("# TYPE "), f[2]...), ' '), "untyped"...)
			}
		case len(line) > 0 && line[0] != '#':
			line = sampleValueOnly(line)
		}
		out.Write(line)
		out.WriteByte('\n')
	}
	return out.Bytes(), nil
}

// sampleValueOnly keeps a sample line's name, labels and value, dropping
// a timestamp and an exemplar after them. Label values may hold spaces,
// "#" and escaped quotes; the labels end at the first } outside quotes.
func sampleValueOnly(line []byte) []byte {
	end := 0 // where the value starts looking: after the labels, if any
	if i := bytes.IndexAny(line, "{ "); i >= 0 && line[i] == '{' {
		quoted := false
		for j := i + 1; j < len(line); j++ {
			switch c := line[j]; {
			case quoted && c == '\\':
				j++
			case c == '"':
				quoted = !quoted
			case !quoted && c == '}':
				end = j + 1
				j = len(line)
			}
		}
		if end == 0 {
			return line // unclosed labels: the parser says so
		}
	}
	head, rest := line[:end], line[end:]
	f := bytes.Fields(rest)
	if end == 0 { // no labels: name value [ts] [# exemplar]
		if len(f) < 2 {
			return line
		}
		return append(append(append([]byte{}, f[0]...), ' '), f[1]...)
	}
	if len(f) < 1 {
		return line
	}
	return append(append(append([]byte{}, head...), ' '), f[0]...)
}
