package compact

import (
	"time"

	"github.com/tailguard/tailguard/internal/gaps"
	"github.com/tailguard/tailguard/internal/httpattempt"
)

// Rec is latencytest.Record's fields, in its order and of its types (see
// Record for what each means): latencytest converts a *Record to a *Rec
// to store it, and the conversion compiles only while the two are the
// same, so a field added to Record must be added here, and to Store's
// encoding (TestStoreRoundTrip fills every field).
type Rec struct {
	ID          string
	Warmup      bool
	Run         int
	Concurrency int
	Chain       int
	Call        int
	Session     int
	Turn        int
	PromptClass string
	PromptChars int
	MaxTokens   int

	OpenLoop     bool
	Scheduled    time.Duration
	StartDelay   time.Duration
	FromSchedule time.Duration

	Start       time.Time
	DNS         time.Duration
	Connect     time.Duration
	TLS         time.Duration
	TTFB        time.Duration
	TTFT        time.Duration
	FirstAnswer time.Duration
	LastToken   time.Duration
	Total       time.Duration
	MaxGap      time.Duration
	Gaps        gaps.Gaps

	TokenEvents      int
	PromptTokens     int
	CompletionTokens int
	CachedTokens     int
	ReasoningTokens  int
	UsageReported    bool
	CachedReported   bool
	ToolCalls        int
	FirstToolCall    time.Duration
	ToolArgsDone     time.Duration
	HostedTools      int
	FinishReason     string
	Model            string
	ServerLatency    time.Duration

	Status              int
	Err                 string
	Detail              string
	CancelAt            time.Duration
	CancelClose         time.Duration
	ServerAfterClose    int
	ServerCloseReported bool
	Injected            string
	Notes               []string
	Content             string
	Attempts            []httpattempt.Attempt
}
