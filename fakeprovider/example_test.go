package fakeprovider_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
)

// A profile in YAML: every quantity is a fixed value or a distribution.
func ExampleParseProfile() {
	p, err := fakeprovider.ParseProfile([]byte(`
model: my-model
ttft: {dist: lognormal, median: 300ms, p99: 1.5s}
itl: 10ms
cold_start: {after_idle: 5m, duration: {dist: uniform, min: 10s, max: 90s}}
faults: {http_529: 0.005}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Model, p.TTFT, p.ITL, p.ColdStart.Duration, p.Faults.HTTP529)

	// Decoding is strict: a typo is an error with its line.
	_, err = fakeprovider.ParseProfile([]byte("model: m\nttft: 200ms\nstal: {probability: 0.1}\n"))
	fmt.Println(err)
	_, err = fakeprovider.ParseProfile([]byte("ttft: {dist: lognormal, median: 2s, p99: 1s}\n"))
	fmt.Println(err)
	// Output:
	// my-model lognormal(median 300ms, p99 1.5s) 10ms uniform(10s, 1m30s) 0.005
	// fakeprovider: profile: line 3: stal: unknown key "stal"
	// fakeprovider: profile: line 1: ttft: lognormal p99 1s is below the median 2s
}

// The in-memory client speaks OpenAI's streaming format.
func ExampleFake_Client() {
	f := fakeprovider.New(fakeprovider.Profile{
		TTFT:         fakeprovider.Fixed(0 * time.Millisecond),
		ITL:          fakeprovider.Fixed(0 * time.Millisecond),
		OutputTokens: fakeprovider.Fixed(3),
	})
	defer f.Close()
	body := `{"model":"fake-model","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	req, _ := http.NewRequest("POST", "http://fake/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("X-Request-ID", "example-0")
	resp, err := f.Client().Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Role    string `json:"role"`
					Content string `json:"content"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
		}
		if data == "[DONE]" || json.Unmarshal([]byte(data), &chunk) != nil {
			fmt.Println(data)
			continue
		}
		for _, c := range chunk.Choices {
			fmt.Printf("role=%q content=%q finish=%v\n", c.Delta.Role, c.Delta.Content, c.FinishReason != nil)
		}
	}
	s := f.Served()[0]
	fmt.Println(s.ID, s.Tokens, s.FinishReason)
	// Output:
	// role="assistant" content="" finish=false
	// role="" content=" The" finish=false
	// role="" content=" tail" finish=false
	// role="" content=" is" finish=false
	// role="" content="" finish=true
	// [DONE]
	// example-0 3 stop
}
