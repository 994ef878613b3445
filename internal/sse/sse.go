// Package sse parses text/event-stream (server-sent events) incrementally,
// as the bytes arrive: feed each read to a [Parser] and it calls an [Emit]
// for each complete event, with data valid only during the call, so that
// a caller decodes it in place without copying.
package sse

import (
	"bytes"
	"errors"
)

// Event is one server-sent event, as a caller keeps it.
type Event struct {
	// Type is the event field ("" for the default "message").
	Type string
	// Data is the data lines joined by "\n".
	Data string
	// ID is the id field.
	ID string
}

// maxEventBytes bounds one event; a larger one is a bad stream.
const maxEventBytes = 64 << 20

// ErrTooLarge is Feed's error for an event over the limit (64 MiB unless
// [Parser.Limit] says otherwise). Its text is what a record's detail
// says, in the words of the package that reports it.
var ErrTooLarge = errors.New("latencytest: SSE event exceeds 64 MiB")

// bom is the UTF-8 byte-order mark, which the standard strips from the
// start of a stream.
const bom = "\xEF\xBB\xBF"

// Parser is an incremental parser of text/event-stream (the WHATWG
// rules): one leading UTF-8 byte-order mark is dropped; lines end in CRLF,
// LF or CR, possibly split across reads at any byte; lines starting with
// ":" are comments; data lines accumulate and a blank line dispatches the
// event. Lines may be of any length.
type Parser struct {
	line    []byte // the current, incomplete line
	data    []byte
	hasData bool
	typ, id string
	afterCR bool // the last byte was a CR: a following LF belongs to it
	size    int
	bomN    int  // bytes of a leading BOM matched so far
	started bool // past the place where a BOM may be
	Limit   int  // bytes an event may hold; 0 means 64 MiB
}

// maxBytes is the parser's event size limit.
func (p *Parser) maxBytes() int {
	if p.Limit > 0 {
		return p.Limit
	}
	return maxEventBytes
}

// Emit receives an event whose data is only valid during the call (the
// parser reuses its buffer): typ is the event field ("" for the default
// "message"), data the data lines joined by "\n", id the id field.
type Emit func(typ string, data []byte, id string)

// Feed parses b and calls emit for each complete event. It returns an error
// ([ErrTooLarge]) only when an event grows beyond the limit.
func (p *Parser) Feed(b []byte, emit Emit) error {
	for !p.started && len(b) > 0 {
		if b[0] != bom[p.bomN] {
			// Not a BOM after all: the bytes matched so far start the
			// first line (they hold no line end).
			p.started = true
			p.line = append(p.line, bom[:p.bomN]...)
			p.size += p.bomN
			break
		}
		b = b[1:]
		if p.bomN++; p.bomN == len(bom) {
			p.started = true
		}
	}
	for len(b) > 0 {
		if p.afterCR {
			p.afterCR = false
			if b[0] == '\n' {
				b = b[1:]
				continue
			}
		}
		// The common event, one "data: " line and a blank line with LF
		// ends, whole in b: emitted from b (the general path below copies
		// it), with the same effect.
		if len(p.line) == 0 && !p.hasData && len(b) > 6 && string(b[:6]) == "data: " {
			if i := bytes.IndexByte(b, '\n'); i >= 0 && i+1 < len(b) && b[i+1] == '\n' && bytes.IndexByte(b[:i], '\r') < 0 {
				if p.size += i; p.size > p.maxBytes() {
					return ErrTooLarge
				}
				emit(p.typ, b[6:i], p.id)
				p.data, p.typ, p.size = p.data[:0], "", 0
				b = b[i+2:]
				continue
			}
		}
		i := lineEnd(b)
		if i < 0 {
			p.line = append(p.line, b...)
			p.size += len(b)
			if p.size > p.maxBytes() {
				return ErrTooLarge
			}
			return nil
		}
		p.afterCR = b[i] == '\r'
		var line []byte
		if len(p.line) > 0 {
			p.line = append(p.line, b[:i]...)
			line = p.line
		} else {
			line = b[:i]
		}
		p.size += i
		if p.size > p.maxBytes() {
			return ErrTooLarge
		}
		p.processLine(line, emit)
		p.line = p.line[:0]
		b = b[i+1:]
	}
	return nil
}

// lineEnd is the index of the first CR or LF in b, or -1 (two
// vectorised byte searches instead of a byte-by-byte set search).
func lineEnd(b []byte) int {
	i := bytes.IndexByte(b, '\n')
	limit := i
	if i < 0 {
		limit = len(b)
	}
	if j := bytes.IndexByte(b[:limit], '\r'); j >= 0 {
		return j
	}
	return i
}

func (p *Parser) processLine(line []byte, emit Emit) {
	if len(line) == 0 {
		if p.hasData {
			emit(p.typ, p.data, p.id)
		}
		p.data, p.hasData, p.typ, p.size = p.data[:0], false, "", 0
		return
	}
	if line[0] == ':' {
		return // comment
	}
	field, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		field, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(field) {
	case "data":
		if p.hasData {
			p.data = append(p.data, '\n')
		}
		p.data = append(p.data, value...)
		p.hasData = true
	case "event":
		if string(value) != p.typ {
			p.typ = string(value)
		}
	case "id":
		if string(value) != p.id {
			p.id = string(value)
		}
	}
}

// End is called at the end of the stream: the standard discards an event
// that was not dispatched, but a server that ends its stream with
// "data: [DONE]" and no blank line ended it cleanly, so End dispatches the
// pending event (after completing an unterminated last line) for the
// caller to judge.
func (p *Parser) End(emit Emit) {
	if !p.started {
		p.line, p.started = append(p.line, bom[:p.bomN]...), true
	}
	if len(p.line) > 0 {
		p.processLine(p.line, emit)
		p.line = p.line[:0]
	}
	p.processLine(nil, emit)
}

// Pending reports whether an event was begun but not dispatched: a stream
// that ends here was cut off.
func (p *Parser) Pending() bool { return p.hasData || len(p.line) > 0 || (!p.started && p.bomN > 0) }
