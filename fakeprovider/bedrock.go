package fakeprovider

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/tailguard/tailguard/fakeprovider/internal/wire"
)

// isBedrockPath reports whether a path is Bedrock's Converse API under
// any prefix: .../model/{modelId}/converse-stream or .../converse.
func isBedrockPath(path string) bool {
	return strings.Contains(path, "/model/") &&
		(strings.HasSuffix(path, "/converse-stream") || strings.HasSuffix(path, "/converse"))
}

// serveBedrock serves POST /model/{modelId}/converse-stream (a stream of
// AWS event-stream frames) and /converse (the whole answer), the model
// ID from the path (escaped or not); requests that are not a POST, or
// name another model, get Bedrock's errors. Each attempt is named by
// x-amzn-RequestId.
func serveBedrock(f *Fake, w http.ResponseWriter, r *http.Request, n uint64, id string) {
	w.Header().Set("X-Amzn-Requestid", generatedRequestID(n))
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeBedrockError(w, &apiError{status: http.StatusMethodNotAllowed, message: "method not allowed; use " + http.MethodPost})
		return
	}
	raw := r.URL.EscapedPath()
	_, rest, _ := strings.Cut(raw, "/model/")
	escaped := rest[:strings.LastIndexByte(rest, '/')]
	model, err := url.PathUnescape(escaped)
	if err != nil || model != f.p.Model {
		writeBedrockError(w, &apiError{status: http.StatusBadRequest, message: "The provided model identifier is invalid."})
		return
	}
	key := id
	if key == "" {
		key = "#" + strconv.FormatUint(n, 10)
	}
	f.chat(w, r, n+1, key, protoBedrock)
}

// writeBedrockError writes Bedrock's error answer: the status, the
// exception in x-amzn-ErrorType and {"message": ...}.
func writeBedrockError(w http.ResponseWriter, e *apiError) {
	b := wire.BedrockError(e.message)
	w.Header().Set("X-Amzn-Errortype", wire.BedrockErrorType(e.status))
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(e.status)
	_, _ = w.Write(b)
}
