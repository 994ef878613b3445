package records

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// readLines calls fn for each non-empty line of a JSON-lines file, with
// s.line set to its number. A last line without a newline that is not
// JSON is a cut file: s is told it is partial (an error when no line was
// read whole). A line that is not JSON is an error naming the line (and
// a NaN or Infinity, which Python's json writes, by name).
func readLines(r io.Reader, s *Sink, fn func(line []byte) error) error {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 1<<16)
	}
	var long []byte
	for n := 1; ; n++ {
		b, rerr := br.ReadSlice('\n')
		if errors.Is(rerr, bufio.ErrBufferFull) { // a line longer than the buffer
			long = append(long[:0], b...)
			for errors.Is(rerr, bufio.ErrBufferFull) {
				b, rerr = br.ReadSlice('\n')
				long = append(long, b...)
			}
			b = long
		}
		atEnd := errors.Is(rerr, io.EOF)
		if rerr != nil && !atEnd {
			return fmt.Errorf("reading line %d: %w", n, rerr)
		}
		s.line = n
		if t := bytes.TrimSpace(b); len(t) > 0 {
			if !json.Valid(t) {
				if atEnd && !bytes.HasSuffix(b, []byte("\n")) && nonJSON(t) == "" {
					if n == 1 {
						return fmt.Errorf("the file ends inside line 1 (cut short): no request read whole")
					}
					s.Partial(fmt.Sprintf("the file ends inside line %d (cut short): %d line(s) read", n, n-1))
					return nil
				}
				return lineError(n, t)
			}
			if err := fn(t); err != nil {
				return err
			}
		}
		if atEnd {
			return nil
		}
	}
}

// lineError says why line n is not JSON.
func lineError(n int, b []byte) error {
	if lit := nonJSON(b); lit != "" {
		return fmt.Errorf("line %d: %s is not JSON (Python's json writes NaN and Infinity for a value that is not a number): a time that is not a number cannot be judged", n, lit)
	}
	var v any
	err := json.Unmarshal(b, &v)
	return fmt.Errorf("line %d: not JSON: %w", n, err)
}

// nonJSON names the first NaN, Infinity or -Infinity literal outside a
// string in b ("" for none).
func nonJSON(b []byte) string {
	in, esc := false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case in && esc:
			esc = false
		case in && c == '\\':
			esc = true
		case c == '"':
			in = !in
		case in:
		default:
			for _, lit := range []string{"NaN", "-Infinity", "Infinity"} {
				if bytes.HasPrefix(b[i:], []byte(lit)) {
					return lit
				}
			}
		}
	}
	return ""
}

// syntaxError says where a one-document file is not JSON: its line, and
// a NaN or Infinity literal by name.
func syntaxError(b []byte, err error) error {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return err
	}
	off := min(int(se.Offset), len(b))
	line := 1 + bytes.Count(b[:off], []byte("\n"))
	from := bytes.LastIndexByte(b[:max(off-1, 0)], '\n') + 1
	to := bytes.IndexByte(b[from:], '\n')
	if to < 0 {
		to = len(b) - from
	}
	if lit := nonJSON(b[from : from+to]); lit != "" {
		return fmt.Errorf("line %d: %s is not JSON (Python's json writes NaN and Infinity for a value that is not a number): a time that is not a number cannot be judged", line, lit)
	}
	return fmt.Errorf("line %d: not JSON: %w", line, err)
}

// readDocs reads a file of one or more JSON documents (vLLM's
// --append-result adds one a run) into trees of maps, slices,
// json.Number, strings, bools and nils. When the input ends early the
// last document is closed where it was cut (see readJSONTree) and
// truncated is set.
func readDocs(r io.Reader) (docs []any, truncated bool, err error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, false, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	for {
		v, cut, err := readJSONTree(dec)
		if errors.Is(err, io.EOF) {
			if len(docs) == 0 {
				return nil, false, errors.New("the file is empty")
			}
			return docs, false, nil
		}
		if err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) && len(docs) > 0 {
				return docs, true, nil
			}
			return nil, false, syntaxError(b, err)
		}
		docs = append(docs, v)
		if cut {
			return docs, true, nil
		}
	}
}

// readJSONTree decodes the next JSON value from dec. When the input ends
// inside it, it closes what is open, drops every value that may have
// been cut (an unfinished container, and the last scalar of an
// unfinished container), and reports truncated. io.EOF: no value left.
func readJSONTree(dec *json.Decoder) (v any, truncated bool, err error) {
	type frame struct {
		arr    []any
		obj    map[string]any
		isObj  bool
		key    string
		hasKey bool
		last   string // the key of the last member, for dropping it
		lastOK bool   // the last element or member is complete
		whole  bool   // holds a container read whole inside an array (a record)
	}
	var stack []*frame
	var root any
	done := false
	put := func(val any, complete bool) {
		if len(stack) == 0 {
			root, done = val, true
			return
		}
		f := stack[len(stack)-1]
		if f.isObj {
			f.obj[f.key] = val
			f.last, f.hasKey = f.key, false
		} else {
			f.arr = append(f.arr, val)
		}
		f.lastOK = complete
	}
	value := func(f *frame) any {
		if f.isObj {
			return f.obj
		}
		if f.arr == nil {
			return []any{}
		}
		return f.arr
	}
	for !done {
		tok, terr := dec.Token()
		if terr != nil {
			if errors.Is(terr, io.EOF) && len(stack) == 0 {
				return nil, false, io.EOF
			}
			if !errors.Is(terr, io.EOF) && !errors.Is(terr, io.ErrUnexpectedEOF) {
				return nil, false, terr
			}
			if len(stack) == 0 {
				return nil, false, io.ErrUnexpectedEOF
			}
			// Cut short: close every open container, innermost first. A
			// container cut inside an array is dropped (a record, one
			// request's list) unless it holds a record read whole (a
			// section: a list of benchmarks); one cut inside an object is
			// kept with what was read whole; a scalar that may be cut is
			// dropped.
			for i := len(stack) - 1; i >= 0; i-- {
				f := stack[i]
				if !f.lastOK {
					if f.isObj && f.last != "" {
						delete(f.obj, f.last)
					} else if !f.isObj && len(f.arr) > 0 {
						f.arr = f.arr[:len(f.arr)-1]
					}
				}
				stack = stack[:i]
				if i == 0 {
					root = value(f)
				} else if p := stack[i-1]; p.isObj || f.whole {
					put(value(f), true)
					p.whole = p.whole || f.whole
				}
			}
			return root, true, nil
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				if n := len(stack); n > 0 {
					stack[n-1].lastOK = true // the element before this one is whole
				}
				stack = append(stack, &frame{obj: map[string]any{}, isObj: t == '{', lastOK: true})
				if t == '[' {
					stack[len(stack)-1].obj = nil
				}
			default:
				f := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				if n := len(stack); n > 0 {
					p := stack[n-1]
					p.whole = p.whole || f.whole || !p.isObj
				}
				put(value(f), true)
			}
		default:
			if f := len(stack); f > 0 && stack[f-1].isObj && !stack[f-1].hasKey {
				stack[f-1].key, stack[f-1].hasKey = t.(string), true
				stack[f-1].lastOK = true // the member before this one is whole
				continue
			}
			if f := len(stack); f > 0 && !stack[f-1].isObj {
				stack[f-1].lastOK = true
			}
			put(t, len(stack) == 0)
		}
	}
	return root, false, nil
}

// decodeTree decodes a tree from readJSONTree into v (a struct).
func decodeTree(tree any, v any) error {
	b, err := json.Marshal(tree)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func has(m map[string]any, k string) bool { _, ok := m[k]; return ok }

// Sniff is what detection sees of a file: the keys of its first record.
type Sniff struct {
	// Array is set for a file that is one JSON array; Keys are then its
	// first element's.
	Array bool
	// Lines is set when the file's first line is a whole JSON object (a
	// JSON-lines file, or a one-line document).
	Lines bool
	// Keys are the first record's keys: the first line's object, the
	// document's top-level object, or the array's first element.
	Keys map[string]bool
}

// Has reports whether the first record has every key.
func (s Sniff) Has(keys ...string) bool {
	for _, k := range keys {
		if !s.Keys[k] {
			return false
		}
	}
	return true
}

// detect names the format of br's contents and returns a reader of every
// byte (detection may have read some). Contents that fit no format, or
// more than one, are an error that says which; so is a NaN or Infinity
// where a number belongs.
func detect(br *bufio.Reader) (string, io.Reader, error) {
	var in io.Reader = br
	head, _ := br.Peek(br.Size()) // what detection sees before it reads a document whole
	t := bytes.TrimLeft(head, " \t\r\n\ufeff")
	if len(t) == 0 {
		return "", nil, errors.New("detect format: the file is empty")
	}
	sn := Sniff{Keys: map[string]bool{}}
	var parseErr error
	switch t[0] {
	case '{':
		line := t
		if i := bytes.IndexByte(t, '\n'); i > 0 {
			line = t[:i]
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(line, &m); err == nil {
			sn.Lines = true
			for k := range m {
				sn.Keys[k] = true
			}
			break
		}
		if lit := nonJSON(line); lit != "" && bytes.IndexByte(t, '\n') > 0 {
			parseErr = lineError(1, line)
		}
		keys, cut, err := topKeys(t)
		if cut && len(head) == br.Size() && !matchesAny(Sniff{Keys: keys}) { // a big document: read it whole
			all, rerr := io.ReadAll(br)
			if rerr != nil {
				return "", nil, rerr
			}
			in = bytes.NewReader(all)
			t = bytes.TrimLeft(all, " \t\r\n\ufeff")
			keys, _, err = topKeys(t)
		}
		if err != nil && parseErr == nil {
			parseErr = syntaxError(t, err)
		}
		sn.Keys = keys
	case '[':
		sn.Array = true
		dec := json.NewDecoder(bytes.NewReader(t))
		if _, err := dec.Token(); err == nil && dec.More() {
			var m map[string]json.RawMessage
			if err := dec.Decode(&m); err == nil {
				for k := range m {
					sn.Keys[k] = true
				}
			} else if !errors.Is(err, io.ErrUnexpectedEOF) {
				parseErr = syntaxError(t, err)
			}
		}
	}
	var found []string
	for _, f := range formats {
		if f.Detect != nil && f.Detect(sn) {
			found = append(found, f.Name)
		}
	}
	switch len(found) {
	case 0:
		if parseErr != nil {
			return "", nil, fmt.Errorf("detect format: %w", parseErr)
		}
		return "", nil, fmt.Errorf("detect format: the file is none of %s (a record's keys name its tool: %s)", strings.Join(Formats(), ", "), hint())
	case 1:
		return found[0], in, nil
	}
	return "", nil, fmt.Errorf("detect format: ambiguous: the file fits %s", strings.Join(found, " and "))
}

func matchesAny(sn Sniff) bool {
	for _, f := range formats {
		if f.Detect != nil && f.Detect(sn) {
			return true
		}
	}
	return false
}

// hint lists what identifies each format, from the registry.
func hint() string {
	var parts []string
	for _, f := range formats {
		if f.Keys != "" {
			parts = append(parts, f.Name+" "+f.Keys)
		}
	}
	return strings.Join(parts, ", ")
}

// topKeys lists the keys of the JSON object b starts with, skipping their
// values; cut is set when b ends inside it.
func topKeys(b []byte) (keys map[string]bool, cut bool, err error) {
	keys = map[string]bool{}
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		return keys, true, nil
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return keys, isEOF(err), cutErr(err)
		}
		k, ok := tok.(string)
		if !ok {
			return keys, false, nil
		}
		keys[k] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return keys, isEOF(err), cutErr(err)
		}
	}
	if _, err := dec.Token(); err != nil {
		return keys, isEOF(err), cutErr(err)
	}
	return keys, false, nil
}

func isEOF(err error) bool { return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) }

// cutErr is err unless it only says the input ended.
func cutErr(err error) error {
	if isEOF(err) {
		return nil
	}
	return err
}
