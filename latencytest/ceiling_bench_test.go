//go:build unix

package latencytest_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tailguard/tailguard/latencytest"
)

// The real-socket ceiling. BenchmarkCeiling climbs a ladder of request
// rates (25 req/s, then ×√2 per rung up to 1,600 req/s) for three clients
// side by side in one run: the raw reader (rawreader_bench_test.go),
// latencytest's client and latencytest's client on net/http
// (WithNetHTTP). Each rung sends ceilingSeconds of requests, evenly
// spaced, against a minimal precise server in a child process (64 tokens
// 10 ms apart after a 20 ms TTFT, one goroutine and one write per event)
// that stamps, on the wall clock both processes read, the instant just
// before it writes each request's first token. A request's TTFT error is
// the client's first-token time minus that stamp: loopback, the client's
// wake-up and its work before its clock reading, and nothing of the
// server's own lateness. (The server also stamps the write's return: the
// log splits each rung's p99 into "after the write", the client's part
// and loopback's, the part a busy server cannot add to.) A client's ceiling is the highest rate at which
// every request succeeded and the error's p99 stayed under 2 ms (a rung
// that fails is tried once more; the client's climb ends at the second
// failure). The clients take turns within each rung, in an order that
// rotates, so that the machine's load falls on all three alike.
//
// It reports each ceiling (req/s), the ratios latencytest/raw and
// nethttp/raw, and whether latencytest's own report (box 13: socket read
// lag, see readlag.go) warned at its ceiling and at the rung past it. Each
// rung's figures are logged (-v). Skipped under -short:
//
//	go test -run '^$' -bench Ceiling -benchtime 1x -v ./latencytest/
func BenchmarkCeiling(b *testing.B) {
	if testing.Short() {
		b.Skip("the ceiling benchmark climbs for minutes")
	}
	url := startCeilingServer(b)
	for b.Loop() {
		climb(b, url)
	}
}

const (
	envCeilingChild = "TAILGUARD_BENCH_CEILING_SERVE"
	ceilingTTFT     = 20 * time.Millisecond
	ceilingITL      = 10 * time.Millisecond
	ceilingTokens   = 64
	ceilingSeconds  = 2
	ceilingBound    = 2 * time.Millisecond
	ceilingBudget   = 6 * time.Minute
)

// rung is one client's run at one rate.
type rung struct {
	rate     float64
	n, fails int
	p50, p99 time.Duration
	afterP99 time.Duration // the error measured from the write's return
	readLag  time.Duration // latencytest only: its report's read lag p99
	warned   bool          // latencytest only: its report warned of late reads
	note     string
}

func (r rung) ok() bool { return r.fails == 0 && r.n > 0 && r.p99 < ceilingBound }

func climb(b *testing.B, url string) {
	clients := []string{"raw", "latencytest", "nethttp"}
	ceiling := map[string]rung{}
	past := map[string]rung{}
	done := map[string]bool{}
	deadline := time.Now().Add(ceilingBudget)
	k := 0
	for rate := 25.0; rate <= 1600 && time.Now().Before(deadline); rate *= math.Sqrt2 {
		rate = math.Round(rate)
		k++
		for j := range clients {
			c := clients[(j+k)%len(clients)]
			if done[c] {
				continue
			}
			r := runRung(b, url, c, rate, k)
			if !r.ok() {
				b.Logf("%-11s %5.0f req/s: %s; trying once more", c, rate, r)
				r = runRung(b, url, c, rate, k+1000)
			}
			b.Logf("%-11s %5.0f req/s: %s", c, rate, r)
			if r.ok() {
				ceiling[c] = r
			} else {
				past[c], done[c] = r, true
			}
		}
		if len(done) == len(clients) {
			break
		}
	}
	for _, c := range clients {
		b.ReportMetric(ceiling[c].rate, c+"-ceiling-req/s")
		b.ReportMetric(float64(ceiling[c].p99)/1e3, c+"-p99-at-ceiling-us")
	}
	if raw := ceiling["raw"].rate; raw > 0 {
		b.ReportMetric(ceiling["latencytest"].rate/raw, "latencytest/raw")
		b.ReportMetric(ceiling["nethttp"].rate/raw, "nethttp/raw")
	}
	flag := func(v bool) float64 {
		if v {
			return 1
		}
		return 0
	}
	b.ReportMetric(flag(ceiling["latencytest"].warned), "latencytest-warned-at-ceiling")
	if r, ok := past["latencytest"]; ok {
		b.ReportMetric(flag(r.warned), "latencytest-warned-past-ceiling")
	}
}

func (r rung) String() string {
	s := fmt.Sprintf("%d requests, %d failed, TTFT error p50 %v p99 %v (after the write: p99 %v)", r.n, r.fails, r.p50, r.p99, r.afterP99)
	if r.readLag > 0 || r.warned {
		s += fmt.Sprintf("; own report: read lag p99 %v, warned %v", r.readLag, r.warned)
	}
	if r.note != "" {
		s += "; " + r.note
	}
	return s
}

// runRung runs one client at rate for ceilingSeconds and joins its
// first-token times with the server's stamps.
func runRung(b *testing.B, url, client string, rate float64, k int) rung {
	n := int(rate * ceilingSeconds)
	interval := time.Duration(float64(time.Second) / rate)
	label := fmt.Sprintf("%s%d", client[:2], k)
	firsts := map[string]time.Time{}
	r := rung{rate: rate, n: n}
	switch client {
	case "raw":
		firsts, r.fails, r.note = rawAtRate(url, label, n, interval)
	default:
		var opts []latencytest.Option
		if client == "nethttp" {
			opts = append(opts, latencytest.WithNetHTTP())
		}
		p := latencytest.OpenAI(url+"/v1", opts...)
		// In flight: a stream lasts ~650 ms.
		conc := int(rate*0.65*1.5) + 16
		res, err := latencytest.Batch{NoWarmup: true, Requests: n, Interval: interval, Concurrency: conc,
			Load: latencytest.Load{MaxTokens: ceilingTokens, Prompt: "Say sixty-four words.", Label: label}}.Run(context.Background(), p)
		p.CloseIdleConnections()
		if err != nil {
			b.Fatal(err)
		}
		for _, rec := range res.Records {
			if !rec.OK() || rec.TokenEvents != ceilingTokens {
				r.fails++
				if r.note == "" {
					r.note = fmt.Sprintf("%s: %s %s (%d token events)", rec.ID, rec.Err, rec.Detail, rec.TokenEvents)
				}
				continue
			}
			firsts[rec.ID] = rec.Start.Add(rec.TTFT)
		}
		if m := res.Machine; m != nil {
			r.readLag = m.ReadLagP99
			r.warned = strings.Contains(m.Warning(), "late against the socket")
		}
	}
	stamps, err := fetchStamps(url)
	if err != nil {
		b.Fatal(err)
	}
	var errs, after []time.Duration
	for id, first := range firsts {
		s, ok := stamps[id]
		if !ok {
			r.fails++
			continue
		}
		errs = append(errs, first.Sub(s[0]))
		after = append(after, first.Sub(s[1]))
	}
	s := latencytest.Sample(errs)
	r.p50, r.p99 = s.Quantile(0.5), s.Quantile(0.99)
	r.afterP99 = latencytest.Sample(after).Quantile(0.99)
	return r
}

// rawAtRate runs the raw reader: request i starts at i·interval on a kept
// connection (a new one when none is idle); it returns each request's
// first-token time.
func rawAtRate(url, label string, n int, interval time.Duration) (map[string]time.Time, int, string) {
	host := strings.TrimPrefix(url, "http://")
	var (
		mu    sync.Mutex
		idle  []*rawConn
		first = map[string]time.Time{}
		fails int
		note  string
		wg    sync.WaitGroup
	)
	start := time.Now()
	for i := range n {
		time.Sleep(time.Until(start.Add(time.Duration(i) * interval)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := label + "-" + strconv.Itoa(i)
			body := []byte(`{"max_tokens":64,"messages":[{"role":"user","content":"Say sixty-four words."}],"model":"fake-model","stream":true,"stream_options":{"include_usage":true}}`)
			mu.Lock()
			var c *rawConn
			if len(idle) > 0 {
				c, idle = idle[len(idle)-1], idle[:len(idle)-1]
			}
			mu.Unlock()
			err := error(nil)
			if c == nil {
				var nc net.Conn
				if nc, err = net.Dial("tcp", host); err == nil {
					c = &rawConn{c: nc, buf: make([]byte, 32<<10)}
				}
			}
			var res rawResult
			if err == nil {
				err = c.rawRequest(host, id, body, &res)
			}
			if err == nil && res.events != ceilingTokens {
				err = fmt.Errorf("%d token events", res.events)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				fails++
				if note == "" {
					note = id + ": " + err.Error()
				}
				if c != nil {
					c.c.Close()
				}
				return
			}
			first[id] = res.start.Add(res.ttft)
			idle = append(idle, c)
		}()
	}
	wg.Wait()
	for _, c := range idle {
		c.c.Close()
	}
	return first, fails, note
}

// fetchStamps takes the server's first-token stamps noted since the last
// fetch: before the write and at its return.
func fetchStamps(url string) (map[string][2]time.Time, error) {
	resp, err := http.Get(url + "/stamps")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string][2]time.Time{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 {
			return nil, fmt.Errorf("stamp line %q", sc.Text())
		}
		v0, err0 := strconv.ParseInt(f[1], 10, 64)
		v1, err1 := strconv.ParseInt(f[2], 10, 64)
		if err0 != nil || err1 != nil {
			return nil, fmt.Errorf("stamp line %q", sc.Text())
		}
		out[f[0]] = [2]time.Time{time.Unix(0, v0), time.Unix(0, v1)}
	}
	return out, sc.Err()
}

// startCeilingServer starts the child that serves the precise server.
func startCeilingServer(b *testing.B) string {
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^$")
	cmd.Env = append(os.Environ(), envCeilingChild+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatalf("the ceiling server printed no URL: %v", err)
	}
	return strings.TrimSpace(line)
}

func init() {
	if os.Getenv(envCeilingChild) == "" {
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	s := &preciseServer{stamps: map[string][2]int64{}}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(c)
		}
	}()
	fmt.Println("http://" + ln.Addr().String())
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// preciseServer streams chat completions: the head and an empty role
// event at once, then ceilingTokens token events ceilingITL apart from
// ceilingTTFT after the request's arrival, each its own chunk and write,
// then the finish, usage and [DONE] events and the last chunk. It notes
// the instants before each request's first-token write and at its return.
type preciseServer struct {
	mu     sync.Mutex
	stamps map[string][2]int64 // X-Request-Id -> wall ns
}

const ssePrefix = `data: {"id":"c","object":"chat.completion.chunk","created":0,"model":"fake-model","choices":[`

func (s *preciseServer) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	var out []byte
	for {
		method, id, length := "", "", 0
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimRight(line, "\r\n")
			if line == "" {
				break
			}
			if method == "" {
				method, _, _ = strings.Cut(line, " ")
				continue
			}
			k, v, _ := strings.Cut(line, ":")
			switch strings.ToLower(k) {
			case "content-length":
				length, _ = strconv.Atoi(strings.TrimSpace(v))
			case "x-request-id":
				id = strings.TrimSpace(v)
			}
		}
		if _, err := br.Discard(length); err != nil {
			return
		}
		arrival := time.Now()
		if method == "GET" {
			s.mu.Lock()
			var sb strings.Builder
			for id, ns := range s.stamps {
				fmt.Fprintf(&sb, "%s %d %d\n", id, ns[0], ns[1])
			}
			clear(s.stamps)
			s.mu.Unlock()
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s", sb.Len(), sb.String())
			continue
		}
		out = append(out[:0], "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n"...)
		out = appendChunk(out, ssePrefix+`{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`+"\n\n")
		if _, err := c.Write(out); err != nil {
			return
		}
		for k := range ceilingTokens {
			time.Sleep(time.Until(arrival.Add(ceilingTTFT + time.Duration(k)*ceilingITL)))
			out = appendChunk(out[:0], ssePrefix+`{"index":0,"delta":{"content":"w`+strconv.Itoa(k)+` "},"finish_reason":null}]}`+"\n\n")
			before := time.Now().UnixNano()
			if _, err := c.Write(out); err != nil {
				return
			}
			if k == 0 {
				after := time.Now().UnixNano()
				s.mu.Lock()
				s.stamps[id] = [2]int64{before, after}
				s.mu.Unlock()
			}
		}
		out = appendChunk(out[:0], ssePrefix+`{"index":0,"delta":{},"finish_reason":"length"}]}`+"\n\n")
		out = appendChunk(out, `data: {"id":"c","object":"chat.completion.chunk","created":0,"model":"fake-model","choices":[],"usage":{"prompt_tokens":6,"completion_tokens":64,"total_tokens":70}}`+"\n\ndata: [DONE]\n\n")
		out = append(out, "0\r\n\r\n"...)
		if _, err := c.Write(out); err != nil {
			return
		}
	}
}

// appendChunk appends data as one chunk of a chunked body.
func appendChunk(b []byte, data string) []byte {
	b = strconv.AppendInt(b, int64(len(data)), 16)
	b = append(b, "\r\n"...)
	b = append(b, data...)
	return append(b, "\r\n"...)
}
