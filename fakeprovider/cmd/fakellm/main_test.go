package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

var urlRe = regexp.MustCompile(`on (http://127\.0\.0\.1:\d+) `)

const profile = "../../testdata/quickstart.yaml"

// TestMain lets the test binary act as the command, for the signal test.
func TestMain(m *testing.M) {
	if os.Getenv("FAKELLM_AS_COMMAND") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestServesAndStops(t *testing.T) {
	pr, pw := io.Pipe()
	stop := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- run([]string{"-addr", "127.0.0.1:0", "-profile", profile, "-seed", "3"}, pw, io.Discard, stop)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("no URL printed: %v", err)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	m := urlRe.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("printed %q, want a loopback URL", line)
	}
	body := `{"model":"fake-model","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	resp, err := http.Post(m[1]+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), "data: [DONE]") {
		t.Fatalf("status %d body %s", resp.StatusCode, b)
	}
	close(stop)
	if err := <-errc; err != nil {
		t.Fatalf("run: %v", err)
	}
	http.DefaultClient.CloseIdleConnections()
}

func TestBadFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"nothing to serve", nil, "give -profile FILE or -preset NAME"},
		{"both", []string{"-profile", profile, "-preset", "x"}, "not both"},
		{"unknown preset", []string{"-preset", "no-such-model"}, `unknown preset "no-such-model"`},
		{"missing file", []string{"-profile", "nope.yaml"}, "nope.yaml"},
		{"stray argument", []string{"-profile", profile, "extra"}, `unexpected argument "extra"`},
		{"address in use or bad", []string{"-profile", profile, "-addr", "256.0.0.1:1"}, "listen on 256.0.0.1:1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(tc.args, io.Discard, io.Discard, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestStopsOnSignal runs the command as a child process and sends SIGTERM
// and SIGINT: it must print that it stops and exit 0.
func TestStopsOnSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-addr", "127.0.0.1:0", "-profile", profile)
			cmd.Env = append(os.Environ(), "FAKELLM_AS_COMMAND=1")
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			r := bufio.NewReader(out)
			line, err := r.ReadString('\n')
			if err != nil || !urlRe.MatchString(line) {
				t.Fatalf("first line %q (%v)", line, err)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			rest, _ := io.ReadAll(r)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("exit: %v", err)
				}
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				t.Fatal("did not stop within 30 s of the signal")
			}
			if !strings.Contains(string(rest), "stopping") {
				t.Errorf("output after the signal: %q", rest)
			}
		})
	}
}
