package fakeprovider

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/tailguard/tailguard/fakeprovider/internal/wire"
)

// maxBodyBytes is the largest request body accepted; larger bodies get 413.
const maxBodyBytes = 8 << 20

// maxRequestIDBytes is the longest X-Request-ID accepted; a longer one gets
// 400.
const maxRequestIDBytes = 256

// apiError is an error answer in OpenAI's format.
type apiError struct {
	status  int
	message string
	typ     string
	param   string
	code    string
}

func (e *apiError) Error() string { return e.message }

func badRequest(param, code, format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, message: fmt.Sprintf(format, args...),
		typ: "invalid_request_error", param: param, code: code}
}

// writeAPIError writes OpenAI's error JSON body with the status.
func writeAPIError(w http.ResponseWriter, e *apiError) {
	body := struct {
		Error struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Param   *string `json:"param"`
			Code    *string `json:"code"`
		} `json:"error"`
	}{}
	body.Error.Message = e.message
	body.Error.Type = e.typ
	if e.param != "" {
		body.Error.Param = &e.param
	}
	if e.code != "" {
		body.Error.Code = &e.code
	}
	b, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(e.status)
	_, _ = w.Write(append(b, '\n'))
}

// faultError is the error answer for an injected status fault.
func faultError(status int) *apiError {
	switch status {
	case 529:
		return &apiError{status: 529, message: "Overloaded", typ: "overloaded_error"}
	case 429:
		return &apiError{status: 429, message: "Rate limit reached for requests", typ: "requests", code: "rate_limit_exceeded"}
	case 503:
		return &apiError{status: 503, message: "The server is temporarily unavailable", typ: "server_error"}
	case 500:
		return &apiError{status: 500, message: "The server had an error while processing your request", typ: "server_error"}
	}
	if status < 500 {
		return &apiError{status: status, message: http.StatusText(status), typ: "invalid_request_error"}
	}
	return &apiError{status: status, message: http.StatusText(status), typ: "server_error"}
}

// parsed is a validated request and its protocol.
type parsed struct {
	proto protocol
	wire.Request
}

// parse reads and validates the body of a request in proto. Errors are
// ready to send. On a real connection (Server) the body must arrive within
// the server's body timeout: a read past it fails with
// os.ErrDeadlineExceeded, answered 408.
func parse(proto protocol, r *http.Request, model string) (parsed, *apiError) {
	p := parsed{proto: proto}
	body, aerr := readBody(r)
	if aerr != nil {
		return p, aerr
	}
	var werr *wire.Error
	if p.Request, werr = wires[proto].Parse(body, model, maxOutputTokens); werr != nil {
		return p, fromWire(werr)
	}
	if proto == protoBedrock {
		p.Stream = strings.HasSuffix(r.URL.Path, "/converse-stream") // the path says (see serveBedrock)
	}
	return p, nil
}

// fromWire is e as an apiError.
func fromWire(e *wire.Error) *apiError {
	return &apiError{status: e.Status, message: e.Message, typ: e.Type, param: e.Param, code: e.Code}
}

// modelNotFound is OpenAI's answer for a model it does not serve.
func modelNotFound(model string) *apiError { return fromWire(wire.ModelNotFound(model)) }

// readBody reads the request body (at most maxBodyBytes). Errors are ready
// to send.
func readBody(r *http.Request) ([]byte, *apiError) {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, &apiError{status: http.StatusRequestEntityTooLarge,
				message: fmt.Sprintf("request body exceeds %d bytes", maxBodyBytes), typ: "invalid_request_error"}
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, &apiError{status: http.StatusRequestTimeout, typ: "invalid_request_error",
				message: "the request body did not arrive in time"}
		}
		return nil, badRequest("", "", "could not read the request body: %v", err)
	}
	return body, nil
}
