//go:build unix

package latencytest_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/latencytest"
)

// The client's cost at the physical floor. BenchmarkLoopback runs, against
// one fake served by a child process over loopback (fixed 200 ms TTFT, 64
// tokens 10 ms apart, enough slots that nothing queues), a reference
// reader that speaks HTTP/1.1 by hand over a socket and times every SSE
// event without decoding JSON, then latencytest's own OpenAI client, one
// after the other in each iteration, both at concurrency 50 after a
// warm-up round. It reports each one's process CPU per request (getrusage:
// the server runs in the other process), their ratio, each one's TTFT
// error (TTFT minus the fixed 200 ms, p50 and p99 over the measured
// requests) and the connections each opened:
//
//	go test -run '^$' -bench Loopback -benchtime 1x ./latencytest/
//
// With TAILGUARD_FAKELLM_URL set (a fakellm of that profile, as
// scripts/sidebyside.sh starts one) the benchmark uses that server, and
// the sub-benchmarks raw and latencytest run one client each (nethttp:
// latencytest's client on net/http instead of its own HTTP/1.1 client).
// The sub-benchmark sidebyside is the comparison with the noise taken
// out (see sideBySide: slices of 500 requests A B A B, 2,000 per client
// and repetition, an API key set); anchor the pattern, or the -bench
// regexp runs BenchmarkLoopbackMix once too:
//
//	go test -run '^$' -bench '^BenchmarkLoopback$/^sidebyside$' -benchtime 5x -v ./latencytest/

const (
	envFakeURL    = "TAILGUARD_FAKELLM_URL"
	envServeChild = "TAILGUARD_BENCH_SERVE_FAKE"

	loopbackTTFT     = 200 * time.Millisecond
	loopbackTokens   = 64
	loopbackConc     = 50
	loopbackRequests = 500
)

// loopbackProfile is the fake of the comparison.
func loopbackProfile() fakeprovider.Profile {
	return fakeprovider.Profile{
		TTFT:            fakeprovider.Fixed(loopbackTTFT),
		ITL:             fakeprovider.Fixed(10 * time.Millisecond),
		OutputTokens:    fakeprovider.Fixed(loopbackTokens),
		SlotsPerReplica: 1024,
		PrefixCache:     fakeprovider.PrefixCache{Disabled: true},
	}
}

// A child started by startFakeChild serves the fake until its standard
// input closes. It runs before the tests (and goleak) would.
func init() {
	if os.Getenv(envServeChild) == "" {
		return
	}
	f := fakeprovider.New(loopbackProfile())
	if path, ok := strings.CutPrefix(os.Getenv(envServeChild), "trace:"); ok {
		serveTraced(f, path) // see lateness_bench_test.go
	}
	srv := fakeprovider.NewServer(f)
	fmt.Println(srv.URL)
	_, _ = io.Copy(io.Discard, os.Stdin)
	srv.Close()
	f.Close()
	os.Exit(0)
}

// fakeURL returns the URL of the loopback fake: TAILGUARD_FAKELLM_URL, or
// a child process of this test binary, stopped at the benchmark's end.
func fakeURL(b *testing.B) string {
	if u := os.Getenv(envFakeURL); u != "" {
		return strings.TrimSuffix(strings.TrimSuffix(u, "/"), "/v1")
	}
	u, _ := startFakeChild(b, "1")
	return u
}

// startFakeChild starts the child that serves the fake (mode "1", or
// "trace:<file>", see serveTraced); stop ends it and waits for it.
func startFakeChild(b *testing.B, mode string) (url string, stop func()) {
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^$")
	cmd.Env = append(os.Environ(), envServeChild+"="+mode)
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
	var once sync.Once
	stop = func() {
		once.Do(func() {
			stdin.Close()
			_ = cmd.Wait()
		})
	}
	b.Cleanup(stop)
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatalf("the fake child printed no URL: %v", err)
	}
	return strings.TrimSpace(line), stop
}

// cpuTime is the process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// clientRun is one client's measured round.
type clientRun struct {
	cpuPerReq time.Duration
	ttftErr   []time.Duration // TTFT minus the fixed TTFT, measured requests
	conns     int             // connections opened, warm-up included
	firsts    []firstToken    // measured requests
}

// firstToken is when a measured request was sent and its first token
// read, on the wall clock (which the fake's child process shares).
type firstToken struct {
	id          string
	sent, first time.Time
}

func (r clientRun) q(p float64) time.Duration {
	s := latencytest.Sample(r.ttftErr)
	return s.Quantile(p)
}

// runLatencytest runs latencytest's client: a warm-up round then the
// measured requests, at loopbackConc.
func runLatencytest(b *testing.B, url string, label string, opts ...latencytest.Option) clientRun {
	return runLatencytestN(b, url, loopbackRequests,
		latencytest.Load{MaxTokens: loopbackTokens, Prompt: "Say sixty-four words.", Label: label}, opts...)
}

// runLatencytestN is runLatencytest with n measured requests of load.
func runLatencytestN(b *testing.B, url string, n int, load latencytest.Load, opts ...latencytest.Option) clientRun {
	p := latencytest.OpenAI(url+"/v1", opts...)
	defer p.CloseIdleConnections()
	runtime.GC() // the garbage of the run before is not this one's
	before := cpuTime()
	r, err := latencytest.Batch{Requests: n, Warmup: loopbackConc, Concurrency: loopbackConc, Load: load}.Run(context.Background(), p)
	cpu := cpuTime() - before
	if err != nil {
		b.Fatal(err)
	}
	var run clientRun
	run.cpuPerReq = cpu / time.Duration(len(r.Records))
	for _, rec := range r.Records {
		if !rec.OK() || rec.TokenEvents != loopbackTokens {
			b.Fatalf("latencytest: %s failed: %s %s (%d token events)", rec.ID, rec.Err, rec.Detail, rec.TokenEvents)
		}
		if rec.Connect > 0 || rec.DNS > 0 {
			run.conns++
		}
		if !rec.Warmup {
			run.ttftErr = append(run.ttftErr, rec.TTFT-loopbackTTFT)
			run.firsts = append(run.firsts, firstToken{rec.ID, rec.Start, rec.Start.Add(rec.TTFT)})
		}
	}
	return run
}

// rawConn is the reference reader's connection: HTTP/1.1 by hand, read
// with net.Conn's Read, as a Go client reads a socket. (latencytest's own
// reads are raw recvmsg calls on the non-blocking socket, see
// internal/machine's lagConn: they skip the runtime's bookkeeping of a
// blocking syscall, which on an otherwise idle process wakes the
// scheduler's monitor thread at every read; that is why latencytest can
// cost less a request than this reader.)
type rawConn struct {
	c     net.Conn
	auth  string // the Authorization header's value, "" for none
	buf   []byte
	req   []byte
	event []byte
}

// rawResult is what the reference reader timed of one request.
type rawResult struct {
	start  time.Time     // when the request was written
	ttft   time.Duration // the first event that carries a token
	events int           // events that carry a token
	gaps   []time.Duration
}

var errRawProtocol = errors.New("raw reader: unexpected HTTP")

// rawRequest sends one streamed chat completion over c and times every
// SSE event of the answer, reading the chunked body to its end so that
// the connection is kept.
func (c *rawConn) rawRequest(host, id string, body []byte, res *rawResult) error {
	c.req = append(c.req[:0], "POST /v1/chat/completions HTTP/1.1\r\nHost: "...)
	c.req = append(c.req, host...)
	c.req = append(c.req, "\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nX-Request-ID: "...)
	c.req = append(c.req, id...)
	if c.auth != "" {
		c.req = append(c.req, "\r\nAuthorization: "...)
		c.req = append(c.req, c.auth...)
	}
	c.req = append(c.req, "\r\nContent-Length: "...)
	c.req = strconv.AppendInt(c.req, int64(len(body)), 10)
	c.req = append(c.req, "\r\n\r\n"...)
	c.req = append(c.req, body...)
	start := time.Now()
	if _, err := c.c.Write(c.req); err != nil {
		return err
	}
	*res = rawResult{start: start, ttft: -1, gaps: res.gaps[:0]}
	var last time.Duration
	// States: the header, then chunk sizes and chunk data, to the last chunk.
	have := 0  // bytes in buf not yet consumed, from off
	off := 0   // start of unconsumed bytes
	chunk := 0 // data bytes left in the current chunk
	inHeader, afterData := true, false
	event := c.event[:0] // the current event's bytes, across chunks
	defer func() { c.event = event[:0] }()
	for {
		if have == 0 {
			off = 0
		}
		if off+have == len(c.buf) {
			copy(c.buf, c.buf[off:off+have])
			off = 0
		}
		n, err := c.c.Read(c.buf[off+have:])
		if err != nil {
			return err
		}
		now := time.Since(start)
		have += n
		for have > 0 {
			b := c.buf[off : off+have]
			switch {
			case inHeader:
				i := bytes.Index(b, []byte("\r\n\r\n"))
				if i < 0 {
					goto more
				}
				if !bytes.HasPrefix(b, []byte("HTTP/1.1 200")) || !bytes.Contains(b[:i], []byte("chunked")) {
					return fmt.Errorf("%w: %q", errRawProtocol, b[:i])
				}
				off, have, inHeader = off+i+4, have-i-4, false
			case afterData: // the CRLF after a chunk's data
				if len(b) < 2 {
					goto more
				}
				off, have, afterData = off+2, have-2, false
			case chunk == 0: // a chunk size line
				i := bytes.IndexByte(b, '\n')
				if i < 0 {
					goto more
				}
				size, err := strconv.ParseUint(string(bytes.TrimRight(b[:i], "\r")), 16, 32)
				if err != nil {
					return fmt.Errorf("%w: chunk size %q", errRawProtocol, b[:i])
				}
				off, have = off+i+1, have-i-1
				if size == 0 {
					// The last chunk and its CRLF: the answer is complete.
					if have < 2 {
						if _, err := io.ReadFull(c.c, c.buf[:2-have]); err != nil {
							return err
						}
					}
					return nil
				}
				chunk = int(size)
			default: // chunk data: split it into events at blank lines
				k := min(chunk, have)
				event = append(event, b[:k]...)
				rest := event
				for {
					i := bytes.Index(rest, []byte("\n\n"))
					if i < 0 {
						break
					}
					ev := rest[:i]
					if bytes.Contains(ev, []byte(`"content":"`)) && !bytes.Contains(ev, []byte(`"content":""`)) ||
						bytes.Contains(ev, []byte(`"reasoning_content":"`)) {
						if res.ttft < 0 {
							res.ttft = now
						} else {
							res.gaps = append(res.gaps, now-last)
						}
						last = now
						res.events++
					}
					rest = rest[i+2:]
				}
				event = event[:copy(event, rest)]
				off, have, chunk = off+k, have-k, chunk-k
				afterData = chunk == 0
			}
		}
	more:
	}
}

// runRaw runs the reference reader: loopbackConc workers, each on its own
// kept connection, a warm-up round then the measured requests.
func runRaw(b *testing.B, url string, label string) clientRun {
	body := []byte(`{"max_tokens":64,"messages":[{"role":"user","content":"Say sixty-four words."}],"model":"fake-model","stream":true,"stream_options":{"include_usage":true}}`)
	return runRawBodies(b, url, label, func(_ []byte, _ int, _ string) []byte { return body })
}

// runRawBodies is runRaw with request i's body built by body (into dst,
// reused by each worker).
func runRawBodies(b *testing.B, url, label string, body func(dst []byte, i int, id string) []byte) clientRun {
	return runRawBodiesN(b, url, label, loopbackRequests, "", body)
}

// runRawBodiesN is runRawBodies with n measured requests, each with the
// API key key ("" for none) in its Authorization header.
func runRawBodiesN(b *testing.B, url, label string, n int, key string, body func(dst []byte, i int, id string) []byte) clientRun {
	host := strings.TrimPrefix(url, "http://")
	auth := ""
	if key != "" {
		auth = "Bearer " + key
	}
	runtime.GC() // the garbage of the run before is not this one's
	before := cpuTime()
	var (
		mu   sync.Mutex
		run  clientRun
		fail error
		wg   sync.WaitGroup
	)
	next := make(chan int)
	go func() {
		for i := range loopbackConc + n {
			next <- i
		}
		close(next)
	}()
	for range loopbackConc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var c *rawConn
			defer func() {
				if c != nil {
					c.c.Close()
				}
			}()
			var res rawResult
			var buf []byte
			for i := range next {
				if c == nil {
					nc, err := net.Dial("tcp", host)
					if err != nil {
						mu.Lock()
						fail = err
						mu.Unlock()
						continue
					}
					c = &rawConn{c: nc, auth: auth, buf: make([]byte, 32<<10)}
					mu.Lock()
					run.conns++
					mu.Unlock()
				}
				id := label + "-" + strconv.Itoa(i)
				buf = body(buf[:0], i, id)
				err := c.rawRequest(host, id, buf, &res)
				if err == nil && res.events != loopbackTokens {
					err = fmt.Errorf("raw reader: %s: %d token events, want %d", id, res.events, loopbackTokens)
				}
				mu.Lock()
				if err != nil {
					fail = err
				} else if i >= loopbackConc {
					run.ttftErr = append(run.ttftErr, res.ttft-loopbackTTFT)
					run.firsts = append(run.firsts, firstToken{id, res.start, res.start.Add(res.ttft)})
				}
				mu.Unlock()
				if err != nil {
					c.c.Close()
					c = nil
				}
			}
		}()
	}
	wg.Wait()
	if fail != nil {
		b.Fatal(fail)
	}
	run.cpuPerReq = (cpuTime() - before) / time.Duration(loopbackConc+n)
	return run
}

func BenchmarkLoopback(b *testing.B) {
	url := fakeURL(b)
	report := func(b *testing.B, name string, runs []clientRun) time.Duration {
		var cpu []time.Duration
		var errs []time.Duration
		conns := 0
		for _, r := range runs {
			cpu = append(cpu, r.cpuPerReq)
			errs = append(errs, r.ttftErr...)
			conns = max(conns, r.conns)
		}
		med := latencytest.Sample(cpu).Quantile(0.5)
		all := clientRun{ttftErr: errs}
		b.ReportMetric(float64(med)/1e3, name+"-cpu-us/req")
		b.ReportMetric(float64(all.q(0.5))/1e3, name+"-ttft-err-p50-us")
		b.ReportMetric(float64(all.q(0.99))/1e3, name+"-ttft-err-p99-us")
		b.ReportMetric(float64(conns), name+"-conns/run")
		return med
	}
	b.Run("raw", func(b *testing.B) {
		var runs []clientRun
		for i := 0; b.Loop(); i++ {
			runs = append(runs, runRaw(b, url, "raw"+strconv.Itoa(i)))
		}
		report(b, "raw", runs)
	})
	b.Run("latencytest", func(b *testing.B) {
		var runs []clientRun
		for i := 0; b.Loop(); i++ {
			runs = append(runs, runLatencytest(b, url, "lt"+strconv.Itoa(i)))
		}
		report(b, "latencytest", runs)
	})
	b.Run("nethttp", func(b *testing.B) {
		// latencytest's client on net/http, without its own HTTP/1.1
		// client (internal/h1): what the fast path saves.
		var runs []clientRun
		for i := 0; b.Loop(); i++ {
			runs = append(runs, runLatencytest(b, url, "nh"+strconv.Itoa(i), latencytest.WithoutFastPath()))
		}
		report(b, "nethttp", runs)
	})
	b.Run("sidebyside", func(b *testing.B) {
		// Equal prompts, side by side (see sideBySide).
		body := []byte(`{"max_tokens":64,"messages":[{"role":"user","content":"Say sixty-four words."}],"model":"fake-model","stream":true,"stream_options":{"include_usage":true}}`)
		sideBySide(b,
			func(i, n int) clientRun {
				return runRawBodiesN(b, url, "sraw"+strconv.Itoa(i), n, benchAPIKey, func([]byte, int, string) []byte { return body })
			},
			func(i, n int) clientRun {
				return runLatencytestN(b, url, n, latencytest.Load{MaxTokens: loopbackTokens, Prompt: "Say sixty-four words.",
					Label: "slt" + strconv.Itoa(i)}, latencytest.WithAPIKey(benchAPIKey))
			})
	})
}

// benchAPIKey is the side-by-side runs' secret: with it set, latencytest
// redacts it and its encodings from everything a request records, as a
// user's run does.
const benchAPIKey = "sk-bench-7f3a9c21e4b86d05a1c3e9f7b2d4608e"

// sideSlicing is one side-by-side repetition: k slices of n measured
// requests per client (4 of 500, 2,000 in all; one of 100 under -short,
// which only checks that the benchmark runs).
func sideSlicing() (k, n int) {
	if testing.Short() {
		return 1, 2 * loopbackConc
	}
	return 4, 500
}

// sideBySide runs, per iteration (a repetition), raw then lt on a slice
// of requests, A B A B, slice after slice (a drift of the machine's speed
// falls on both within seconds), and reports each one's median CPU per
// request, and the ratio latencytest/raw of each repetition: its median
// (cpu-ratio), quartiles and extremes, so that the spread is seen. A
// slice's CPU is the process's user+system time over its requests, its
// warm-up round included, after a GC that leaves the slice before's
// garbage out of it; a repetition's is the mean of its slices'.
func sideBySide(b *testing.B, raw, lt func(i, n int) clientRun) {
	var rawRuns, ltRuns []clientRun
	var ratios []float64
	k, n := sideSlicing()
	for i := 0; b.Loop(); i++ {
		var r, l clientRun
		for s := range k {
			rs, ls := raw(i*k+s, n), lt(i*k+s, n)
			r.cpuPerReq += rs.cpuPerReq / time.Duration(k)
			l.cpuPerReq += ls.cpuPerReq / time.Duration(k)
			r.ttftErr, l.ttftErr = append(r.ttftErr, rs.ttftErr...), append(l.ttftErr, ls.ttftErr...)
		}
		b.Logf("repetition %d: raw %v, latencytest %v a request: %.3f", i, r.cpuPerReq, l.cpuPerReq, float64(l.cpuPerReq)/float64(r.cpuPerReq))
		rawRuns, ltRuns = append(rawRuns, r), append(ltRuns, l)
		ratios = append(ratios, float64(l.cpuPerReq)/float64(r.cpuPerReq))
	}
	var rawCPU, ltCPU []time.Duration
	rawAll, ltAll := clientRun{}, clientRun{}
	for i := range rawRuns {
		rawCPU, ltCPU = append(rawCPU, rawRuns[i].cpuPerReq), append(ltCPU, ltRuns[i].cpuPerReq)
		rawAll.ttftErr = append(rawAll.ttftErr, rawRuns[i].ttftErr...)
		ltAll.ttftErr = append(ltAll.ttftErr, ltRuns[i].ttftErr...)
	}
	b.ReportMetric(float64(latencytest.Sample(rawCPU).Quantile(0.5))/1e3, "raw-cpu-us/req")
	b.ReportMetric(float64(latencytest.Sample(ltCPU).Quantile(0.5))/1e3, "latencytest-cpu-us/req")
	slices.Sort(ratios)
	q := func(p float64) float64 { // linear between order statistics
		x := p * float64(len(ratios)-1)
		k := int(x)
		if k+1 >= len(ratios) {
			return ratios[k]
		}
		return ratios[k] + (x-float64(k))*(ratios[k+1]-ratios[k])
	}
	b.ReportMetric(q(0.5), "cpu-ratio")
	b.ReportMetric(ratios[0], "cpu-ratio-min")
	b.ReportMetric(q(0.25), "cpu-ratio-q1")
	b.ReportMetric(q(0.75), "cpu-ratio-q3")
	b.ReportMetric(ratios[len(ratios)-1], "cpu-ratio-max")
	b.ReportMetric(float64(ltAll.q(0.99)-rawAll.q(0.99))/1e3, "ttft-p99-excess-us")
}
