package latencytest_test

import (
	"bufio"
	"context"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tailguard/tailguard/latencytest"
)

// In virtual time the probe does not run: nothing is sampled, box 13
// says so, and nothing warns.
func TestVirtualRunSamplesNoMachine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := fake(t, fixed(200*time.Millisecond, 10*time.Millisecond, 8))
		r, err := latencytest.Batch{NoWarmup: true, Requests: 8, Concurrency: 2, Load: latencytest.Load{MaxTokens: 8}}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if m := r.Machine; m == nil || !m.Virtual || m.Wakeups != 0 || m.Warning() != "" {
			t.Errorf("machine in virtual time: %+v", m)
		}
		if b := r.Disclosure.Box(13).Answer; !strings.Contains(b, "machine signals and timer lateness not measured (virtual time)") {
			t.Errorf("box 13: %s", b)
		}
		for _, rec := range r.Records { // the probe changed no virtual timing
			if rec.TTFT != 200*time.Millisecond || rec.Total != 270*time.Millisecond {
				t.Errorf("%s: TTFT %v total %v", rec.ID, rec.TTFT, rec.Total)
			}
		}
		ol, err := latencytest.OpenLoop{Rate: 10, Arrivals: "constant", Requests: 4, Load: latencytest.Load{MaxTokens: 8}}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		cr, err := latencytest.Chain{Chains: 2, Length: 2}.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		for what, m := range map[string]*latencytest.MachineLoad{"open loop": ol.Machine, "chains": cr.Machine, "chain calls": cr.Calls().Machine} {
			if m == nil || !m.Virtual {
				t.Errorf("%s: machine %+v", what, m)
			}
		}
		for what, d := range map[string]latencytest.Disclosure{"open loop": ol.Disclosure, "chains": cr.Disclosure} {
			if b := d.Box(13).Answer; !strings.Contains(b, "not measured (virtual time)") {
				t.Errorf("%s: box 13: %s", what, b)
			}
		}
	})
}

// envBurn makes the test binary a CPU burner (TestMachineBurnChild).
const envBurn = "TAILGUARD_TEST_BURN_CPU"

// TestMachineBurnChild is the child of TestBusyMachineWarns: with envBurn
// set to a duration it spins 2x NumCPU goroutines, each on its own
// thread, for that long, so more tasks are runnable than there are cores.
func TestMachineBurnChild(t *testing.T) {
	v := os.Getenv(envBurn)
	if v == "" {
		t.Skip("the CPU burner of TestBusyMachineWarns: runs only as its child")
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 || d > 10*time.Second {
		t.Fatalf("%s=%q: want a duration up to 10s", envBurn, v)
	}
	n := 2 * runtime.NumCPU()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(n))
	end := time.Now().Add(d)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			x := 0.0
			for time.Now().Before(end) {
				for i := range 10000 {
					x += math.Sqrt(float64(i))
				}
			}
			_ = x
		})
	}
	os.Stdout.WriteString("burning\n")
	wg.Wait()
}

// A run while another process burns every core warns, with the figures,
// in box 13 and Result.Machine. Its assertion does not depend on exact
// figures: 2x NumCPU spinning threads keep more tasks runnable than
// there are cores, so at least that signal holds however the scheduler
// treats the client.
func TestBusyMachineWarns(t *testing.T) {
	if testing.Short() {
		t.Skip("burns every core for 2 s")
	}
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc/loadavg for a warning that cannot flake; the timer probe alone may see no lateness")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMachineBurnChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), envBurn+"=2s")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	burning := false
	for !burning && sc.Scan() {
		burning = sc.Text() == "burning"
	}
	drained := make(chan struct{})
	go func() { // read to the end, so the child never blocks on its stdout
		defer close(drained)
		io.Copy(io.Discard, out)
	}()
	defer func() {
		<-drained // the child exited; then Wait may close the pipe
		if err := cmd.Wait(); err != nil {
			t.Errorf("burner: %v", err)
		}
	}()
	if !burning {
		t.Fatal("the burner never started burning")
	}
	// About a second of real-time calls, all inside the burn.
	p := latencytest.Func(func(ctx context.Context, _ latencytest.Request) error {
		select {
		case <-time.After(25 * time.Millisecond):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	r, err := latencytest.Batch{NoWarmup: true, Requests: 40, Concurrency: 1}.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	m := r.Machine
	if m == nil || m.Virtual || m.Wakeups == 0 || math.IsNaN(m.Runnable) {
		t.Fatalf("machine under load: %+v", m)
	}
	if m.Warning() == "" {
		t.Errorf("no warning while every core burned: %s", m)
	}
	box := r.Disclosure.Box(13).Answer
	if !strings.Contains(box, "WARNING: the machine was busy: timings may include scheduling delay of the client") ||
		!strings.Contains(box, "timer lateness p50 ") {
		t.Errorf("box 13: %s", box)
	}
	t.Logf("box 13: %s", box)
}
