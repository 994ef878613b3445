//go:build unix

package fakeprovider

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The fake at scale: a fake serving many concurrent 10 ms streams over
// loopback, in a process of its own (so that the CPU measured is the
// fake's alone, not the client's), driven by raw-socket clients in the
// benchmark's process. The child is this test binary, run as
// TestScaleChild with scaleChildEnv set.

const scaleChildEnv = "TAILGUARD_FAKE_SCALE_CHILD"

// scaleProfileEnv names a file for the child's CPU profile of its
// measurement window; each level writes its own, named with the level's
// benchmark name after the given one (prof-1000-streams-lazy).
const scaleProfileEnv = "TAILGUARD_FAKE_SCALE_CPUPROFILE"

// scaleStreamsEnv replaces BenchmarkFakeScale's levels with its own
// comma-separated numbers of streams ("300,500").
const scaleStreamsEnv = "TAILGUARD_FAKE_SCALE_STREAMS"

// scaleProfile: 64-token streams at 10 ms ITL after a 10 ms TTFT, one
// token per event, with slots for every stream (nothing queues).
func scaleProfile() Profile {
	return Profile{
		TTFT:            Fixed(10 * time.Millisecond),
		ITL:             Fixed(10 * time.Millisecond),
		OutputTokens:    Fixed(64),
		SlotsPerReplica: 8192,
		PrefixCache:     PrefixCache{Disabled: true},
		ServedLimit:     1000,
	}
}

// scaleReport is what the child reports for a window: its CPU (user and
// system) and the lateness of the events it wrote.
type scaleReport struct {
	CPU      time.Duration
	Lateness Lateness
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestScaleChild is BenchmarkFakeScale's server process: it serves
// scaleProfile, prints its URL, then answers commands on stdin: "start"
// opens a measurement window, "stop" prints the window's scaleReport as
// JSON; end of input stops it. Skipped unless scaleChildEnv is set.
func TestScaleChild(t *testing.T) {
	if os.Getenv(scaleChildEnv) == "" {
		t.Skip("BenchmarkFakeScale's server process; runs only as its child")
	}
	f := mustNew(t, scaleProfile())
	srv := NewServer(f)
	defer srv.Close()
	fmt.Println(srv.URL)
	in := bufio.NewScanner(os.Stdin)
	var cpu0 time.Duration
	for in.Scan() {
		switch in.Text() {
		case "start":
			f.late.reset()
			cpu0 = processCPU()
			if path := os.Getenv(scaleProfileEnv); path != "" {
				pf, err := os.Create(path)
				if err == nil && pprof.StartCPUProfile(pf) == nil {
					defer pprof.StopCPUProfile()
				}
			}

		case "stop":
			b, _ := json.Marshal(scaleReport{CPU: processCPU() - cpu0, Lateness: f.Lateness()})
			fmt.Println(string(b))
		}
	}
}

// scaleChild is a running child: its URL, its stdin and its stdout.
type scaleChild struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	addr string
}

func startScaleChild(b *testing.B) *scaleChild {
	cmd := exec.Command(os.Args[0], "-test.run=^TestScaleChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), scaleChildEnv+"=1")
	if path := os.Getenv(scaleProfileEnv); path != "" {
		_, level, _ := strings.Cut(b.Name(), "/")
		cmd.Env = append(cmd.Env, scaleProfileEnv+"="+path+"-"+level)
	}
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	c := &scaleChild{cmd: cmd, in: in, out: bufio.NewReader(outPipe)}
	line, err := c.out.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "http://") {
		c.close()
		b.Fatalf("fake scale child: first line %q: %v", line, err)
	}
	c.addr = strings.TrimPrefix(strings.TrimSpace(line), "http://")
	return c
}

func (c *scaleChild) command(b *testing.B, cmd string) {
	if _, err := io.WriteString(c.in, cmd+"\n"); err != nil {
		b.Fatalf("fake scale child: %s: %v", cmd, err)
	}
}

func (c *scaleChild) report(b *testing.B) scaleReport {
	c.command(b, "stop")
	line, err := c.out.ReadString('\n')
	var r scaleReport
	if err == nil {
		err = json.Unmarshal([]byte(line), &r)
	}
	if err != nil {
		b.Fatalf("fake scale child: report %q: %v", line, err)
	}
	return r
}

func (c *scaleChild) close() {
	_ = c.in.Close()
	_ = c.cmd.Wait()
}

// rawStreams keeps n keep-alive connections to addr streaming one request
// after another, each starting at a random offset within the first stream
// (so events spread over the ITL, as independent clients' would), until
// stop is closed; each request is read to the end of its chunked body,
// which must end with [DONE]. It returns when every connection has
// finished its last request, with the number of requests completed.
func rawStreams(b *testing.B, addr string, n int, stop <-chan struct{}, spread time.Duration) int64 {
	req := []byte("POST /v1/chat/completions HTTP/1.1\r\nHost: fake\r\nContent-Type: application/json\r\n" +
		"Content-Length: " + strconv.Itoa(len(benchBody)) + "\r\n\r\n" + string(benchBody))
	const end = "data: [DONE]\n\n\r\n0\r\n\r\n"
	r := rand.New(rand.NewPCG(uint64(n), 7))
	var done atomic.Int64
	var wg sync.WaitGroup
	for i := range n {
		delay := time.Duration(r.Int64N(int64(spread)))
		wg.Go(func() {
			select {
			case <-time.After(delay):
			case <-stop:
				return
			}
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				b.Errorf("connection %d: %v", i, err)
				return
			}
			defer conn.Close()
			buf := make([]byte, 16<<10)
			var tail []byte
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := conn.Write(req); err != nil {
					b.Errorf("connection %d: %v", i, err)
					return
				}
				tail = tail[:0]
				for !bytes.HasSuffix(tail, []byte(end)) {
					k, err := conn.Read(buf)
					if err != nil {
						b.Errorf("connection %d: reading a stream: %v", i, err)
						return
					}
					tail = append(tail, buf[:k]...)
					if len(tail) > 64 {
						tail = append(tail[:0], tail[len(tail)-64:]...)
					}
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	return done.Load()
}

// lazyStreams is rawStreams with clients as cheap as they can honestly
// be: each connection is a plain blocking socket outside Go's poller (so
// the bytes the fake writes wake nobody), and one goroutine drains every
// connection without blocking once every poll, reading what has arrived
// in a 256 KiB buffer and sending the next request when a stream has
// ended. The fake's write times do not depend on when the bytes are read
// as long as the client's receive buffer never fills: the largest amount
// found queued on one connection at a poll is returned as maxQueued, with
// the connections' receive buffer size, to show that it did not.
func lazyStreams(b *testing.B, addr string, n int, stop <-chan struct{}, spread, poll time.Duration) (requests int64, maxQueued, rcvbuf int) {
	req := []byte("POST /v1/chat/completions HTTP/1.1\r\nHost: fake\r\nContent-Type: application/json\r\n" +
		"Content-Length: " + strconv.Itoa(len(benchBody)) + "\r\n\r\n" + string(benchBody))
	const end = "data: [DONE]\n\n\r\n0\r\n\r\n"
	tcp, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	sa := &syscall.SockaddrInet4{Port: tcp.Port}
	copy(sa.Addr[:], tcp.IP.To4())
	type lazyConn struct {
		fd    int
		start time.Time // when to send the first request
		open  bool      // a request is being answered
		tail  []byte
	}
	r := rand.New(rand.NewPCG(uint64(n), 7))
	conns := make([]*lazyConn, n)
	defer func() {
		for _, c := range conns {
			if c != nil {
				_ = syscall.Close(c.fd)
			}
		}
	}()
	t0 := time.Now()
	for i := range conns {
		fd, err := tcpSocket()
		if err != nil {
			b.Fatalf("connection %d: %v", i, err)
		}
		conns[i] = &lazyConn{fd: fd, start: t0.Add(time.Duration(r.Int64N(int64(spread))))}
		if err := syscall.Connect(fd, sa); err != nil {
			b.Fatalf("connection %d: %v", i, err)
		}
		_ = syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
	}
	rcvbuf, _ = syscall.GetsockoptInt(conns[0].fd, syscall.SOL_SOCKET, syscall.SO_RCVBUF)
	buf := make([]byte, 256<<10)
	send := func(c *lazyConn) bool {
		if _, err := syscall.Write(c.fd, req); err != nil { // tiny: never blocks
			b.Errorf("sending a request: %v", err)
			return false
		}
		c.open, c.tail = true, c.tail[:0]
		return true
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return requests, maxQueued, rcvbuf
		case <-tick.C:
		}
		now := time.Now()
		for _, c := range conns {
			if !c.open {
				if !c.start.IsZero() && now.After(c.start) {
					c.start = time.Time{}
					if !send(c) {
						return requests, maxQueued, rcvbuf
					}
				}
				continue
			}
			queued := 0
			for {
				k, _, err := syscall.Recvfrom(c.fd, buf, syscall.MSG_DONTWAIT)
				if err == syscall.EAGAIN || err == syscall.EINTR {
					break
				}
				if err != nil || k == 0 {
					b.Errorf("reading a stream: %d bytes, %v", k, err)
					return requests, maxQueued, rcvbuf
				}
				queued += k
				c.tail = append(c.tail, buf[max(0, k-64):k]...)
				if len(c.tail) > 64 {
					c.tail = append(c.tail[:0], c.tail[len(c.tail)-64:]...)
				}
				if k < len(buf) {
					break
				}
			}
			maxQueued = max(maxQueued, queued)
			if bytes.HasSuffix(c.tail, []byte(end)) {
				requests++
				c.open = false
				if !send(c) {
					return requests, maxQueued, rcvbuf
				}
			}
		}
	}
}

// machineBusy is the CPU time the whole machine has spent on anything but
// idling and waiting for I/O since boot (Linux's /proc/stat); 0 where
// that is not available.
func machineBusy() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal ...
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	var ticks int64
	for i, v := range f[1:9] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0
		}
		if i != 3 && i != 4 { // idle, iowait
			ticks += n
		}
	}
	return time.Duration(ticks) * (time.Second / 100) // USER_HZ
}

// benchLoopbackWrite is the floor under the fake's CPU per event: one
// thread writes 220-byte chunks (the size of a chat event) to 1,000
// loopback connections in turn, 100 every millisecond (100k writes a
// second, as the fake at 1,000 streams), read by a lazy client; it
// reports that thread's CPU (user and system) per write. Linux only
// (per-thread CPU time).
func benchLoopbackWrite(b *testing.B) {
	const conns, perMs, rounds = 1000, 100, 2000
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	var srv []net.Conn
	var fds []int
	defer func() {
		for _, c := range srv {
			c.Close()
		}
		for _, fd := range fds {
			syscall.Close(fd)
		}
	}()
	for range conns {
		fd, err := tcpSocket()
		if err != nil {
			b.Fatal(err)
		}
		fds = append(fds, fd)
		if err := syscall.Connect(fd, &syscall.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
			b.Fatal(err)
		}
		c, err := ln.Accept()
		if err != nil {
			b.Fatal(err)
		}
		srv = append(srv, c)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { // the lazy reader
		buf := make([]byte, 256<<10)
		for {
			select {
			case <-stop:
				return
			case <-time.After(40 * time.Millisecond):
			}
			for _, fd := range fds {
				for {
					k, _, err := syscall.Recvfrom(fd, buf, syscall.MSG_DONTWAIT)
					if err != nil || k < len(buf) {
						break
					}
				}
			}
		}
	})
	defer func() { close(stop); wg.Wait() }()
	threadCPU := func() time.Duration {
		var ru syscall.Rusage
		_ = syscall.Getrusage(1, &ru) // RUSAGE_THREAD
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	msg := bytes.Repeat([]byte("x"), 220)
	var cpu time.Duration
	for b.Loop() {
		runtime.LockOSThread()
		cpu0, next := threadCPU(), time.Now()
		for r := range rounds {
			for k := range perMs {
				if _, err := srv[(r*perMs+k)%conns].Write(msg); err != nil {
					b.Fatal(err)
				}
			}
			next = next.Add(time.Millisecond)
			time.Sleep(time.Until(next))
		}
		cpu = threadCPU() - cpu0
		runtime.UnlockOSThread()
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/(rounds*perMs)/1e3, "cpu-us/write")
}

// BenchmarkFakeScale reports the fake server's CPU per streamed event
// (its own process's user+system time over a window, divided by the
// events it wrote in it) and its event lateness p50/p99/max (write time
// minus due time, as the fake measures it), at 100, 1,000 and 2,000
// concurrent 64-token streams at 10 ms ITL over loopback: 10k, 100k and
// 200k events/s when the fake keeps up. First, write-alone (Linux): the
// CPU of one loopback write of an event's size, measured alone, the floor
// under the fake's CPU per event. Each level runs a 2 s window
// after every stream has started, twice: with lazy clients (lazyStreams:
// sockets outside the poller, drained every 40 ms; they also report the
// most bytes found queued on one connection, against its receive buffer)
// and with eager ones (rawStreams: a goroutine per connection blocked in
// a read, woken by every write). It also reports the cores the fake, the
// clients and the whole machine kept busy in the window: on a shared
// machine, lateness includes waiting for a core.
func BenchmarkFakeScale(b *testing.B) {
	if runtime.GOOS == "linux" {
		b.Run("write-alone", benchLoopbackWrite)
	}
	levels := []int{100, 1000, 2000}
	if env := os.Getenv(scaleStreamsEnv); env != "" {
		levels = levels[:0]
		for f := range strings.SplitSeq(env, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				b.Fatalf("%s=%q: %q is not a number of streams", scaleStreamsEnv, env, f)
			}
			levels = append(levels, n)
		}
	}
	for _, streams := range levels {
		for _, mode := range []string{"lazy", "eager"} {
			b.Run(strconv.Itoa(streams)+"-streams-"+mode, func(b *testing.B) {
				benchFakeScale(b, streams, mode == "lazy")
			})
		}
	}
}

func benchFakeScale(b *testing.B, streams int, lazy bool) {
	var rep scaleReport
	var wall, clientCPU, busy time.Duration
	var maxQueued, rcvbuf int
	for b.Loop() {
		c := startScaleChild(b)
		stop := make(chan struct{})
		var requests int64
		var wg sync.WaitGroup
		spread := 660 * time.Millisecond // one stream: TTFT and 64 ITLs
		if lazy {
			wg.Go(func() {
				requests, maxQueued, rcvbuf = lazyStreams(b, c.addr, streams, stop, spread, 40*time.Millisecond)
			})
		} else {
			wg.Go(func() { requests = rawStreams(b, c.addr, streams, stop, spread) })
		}
		time.Sleep(spread + 200*time.Millisecond)
		c.command(b, "start")
		start, clientCPU0, busy0 := time.Now(), processCPU(), machineBusy()
		time.Sleep(2 * time.Second)
		rep = c.report(b)
		wall = time.Since(start)
		clientCPU, busy = processCPU()-clientCPU0, machineBusy()-busy0
		close(stop)
		wg.Wait()
		c.close()
		if requests == 0 || rep.Lateness.Events == 0 {
			b.Fatalf("%d requests completed, %d events measured", requests, rep.Lateness.Events)
		}
	}
	ev := float64(rep.Lateness.Events)
	b.ReportMetric(float64(rep.CPU.Nanoseconds())/ev/1e3, "cpu-us/event")
	b.ReportMetric(ev/wall.Seconds(), "events/s")
	b.ReportMetric(float64(rep.Lateness.P50.Nanoseconds())/1e3, "late-p50-us")
	b.ReportMetric(float64(rep.Lateness.P99.Nanoseconds())/1e3, "late-p99-us")
	b.ReportMetric(float64(rep.Lateness.Max.Nanoseconds())/1e3, "late-max-us")
	b.ReportMetric(rep.CPU.Seconds()/wall.Seconds(), "fake-cores")
	b.ReportMetric(clientCPU.Seconds()/wall.Seconds(), "client-cores")
	b.ReportMetric(float64(clientCPU.Nanoseconds())/ev/1e3, "client-cpu-us/event")
	if busy > 0 { // the whole machine, other processes included
		b.ReportMetric(busy.Seconds()/wall.Seconds(), "machine-busy-cores")
	}
	if lazy {
		b.ReportMetric(float64(maxQueued)/1024, "client-max-queued-KiB")
		b.ReportMetric(float64(rcvbuf)/1024, "client-rcvbuf-KiB")
		if maxQueued > rcvbuf/4 {
			b.Errorf("a client found %d bytes queued, over a quarter of its %d-byte receive buffer: the fake's writes may have been held back", maxQueued, rcvbuf)
		}
	}
}

// tcpSocket opens a blocking IPv4 TCP socket outside Go's poller, closed
// on exec (as SOCK_CLOEXEC would, which not every unix has).
func tcpSocket() (int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fd)
	}
	return fd, err
}
