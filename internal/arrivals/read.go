package arrivals

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Arrival is one line of a trace: when the request is due, as an offset
// from the run's start, and the prompt tokens and answer cap it asks for
// (0: not given).
type Arrival struct {
	At           time.Duration
	PromptTokens int
	MaxTokens    int
}

// Read reads a trace, one arrival a line: an offset with its unit (a Go
// duration), then optionally the prompt tokens (1 to maxPrompt) and the
// answer cap (1 to maxTokens), separated by white space or a comma.
// Blank lines and anything after a # are skipped; offsets must not
// decrease. The error names the line (from 1); a trace without any
// arrival is an error.
func Read(r io.Reader, maxPrompt, maxTokens int) ([]Arrival, error) {
	var out []Arrival
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if k := strings.IndexByte(text, '#'); k >= 0 {
			text = text[:k]
		}
		fields := strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\r' })
		if len(fields) == 0 {
			if strings.Contains(text, ",") {
				return nil, fmt.Errorf("line %d: no offset before the comma", line)
			}
			continue
		}
		a, err := parse(fields, [2]int{maxPrompt, maxTokens})
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if n := len(out); n > 0 && a.At < out[n-1].At {
			return nil, fmt.Errorf("line %d: offset %v is before the previous line's %v (offsets must not decrease)", line, a.At, out[n-1].At)
		}
		out = append(out, a)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("after line %d: %w", line, err)
	}
	if len(out) == 0 {
		return nil, errors.New("no arrivals (every line is blank or a comment)")
	}
	return out, nil
}

// parse reads "offset [prompt_tokens [max_tokens]]".
func parse(fields []string, limits [2]int) (Arrival, error) {
	var a Arrival
	if len(fields) > 3 {
		return a, fmt.Errorf("%d fields, want at most 3 (offset, prompt tokens, max tokens)", len(fields))
	}
	d, err := time.ParseDuration(fields[0])
	switch {
	case err != nil && isNumber(fields[0]):
		return a, fmt.Errorf("offset %q has no unit (write 250ms or 0.25s)", fields[0])
	case err != nil:
		return a, fmt.Errorf("offset %q is not a duration (write 250ms or 0.25s)", fields[0])
	case d < 0:
		return a, fmt.Errorf("offset %v < 0", d)
	}
	a.At = d
	for i, name := range []string{"prompt tokens", "max tokens"} {
		if len(fields) <= i+1 {
			break
		}
		n, err := strconv.Atoi(fields[i+1])
		if isDigits(fields[i+1]) && (err != nil || n > limits[i]) {
			return a, fmt.Errorf("%s %s: above the limit of %d", name, fields[i+1], limits[i])
		}
		if err != nil || n < 1 {
			return a, fmt.Errorf("%s %q: want a whole number >= 1", name, fields[i+1])
		}
		if i == 0 {
			a.PromptTokens = n
		} else {
			a.MaxTokens = n
		}
	}
	return a, nil
}

// isDigits reports whether s is a whole number written in decimal digits
// (with an optional +), however large.
func isDigits(s string) bool {
	s = strings.TrimPrefix(s, "+")
	return s != "" && strings.Trim(s, "0123456789") == ""
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}
