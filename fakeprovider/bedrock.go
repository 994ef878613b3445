package fakeprovider

import (
	"net/http"
	"strconv"

	"github.com/tailguard/tailguard/fakeprovider/internal/wire"
)

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
