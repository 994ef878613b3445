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

const profile = "../../fakeprovider/testdata/quickstart.yaml"

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
	restc := make(chan string, 1)
	go func() { rest, _ := io.ReadAll(pr); restc <- string(rest) }()
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
	// The stream's token events were all written: at least one counted.
	if rest := <-restc; !regexp.MustCompile(`fakellm: [1-9]\d* events streamed, lateness p50 \S+ p99 \S+ max \S+\n`).MatchString(rest) {
		t.Errorf("printed %q at the end, want the events streamed and their lateness", rest)
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
		{"empty address", []string{"-profile", profile, "-addr", ""}, "-addr is empty (an unset variable?)"},
		{"no host", []string{"-profile", profile, "-addr", ":8080"}, `-addr ":8080" has no host`},
		{"no port", []string{"-profile", profile, "-addr", "127.0.0.1:"}, `-addr "127.0.0.1:" has no port`},
		{"only a colon", []string{"-profile", profile, "-addr", ":"}, `-addr ":" has no host`},
		{"no colon", []string{"-profile", profile, "-addr", "localhost"}, `-addr "localhost": want host:port`},
		{"seed below -1", []string{"-profile", profile, "-seed", "-2"}, "-seed -2: want a seed >= 0, or -1 for the profile's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr strings.Builder
			err := run(tc.args, io.Discard, io.Discard, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
			if code := exitCode(err, &stderr); code != 2 || !strings.HasPrefix(stderr.String(), "fakellm: ") {
				t.Errorf("exit %d, stderr %q; want 2 and the error", code, stderr.String())
			}
		})
	}
}

// -h prints the usage and exits 0; an unknown flag exits 2.
func TestHelpAndFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr string // what the output must hold
		reason string
	}{
		{"-h", []string{"-h"}, 0, "Usage of fakellm:", "asking for help is not an error"},
		{"-help", []string{"-help"}, 0, "-preset string", "the usage lists every flag"},
		{"unknown flag", []string{"-port", "8080"}, 2, "flag provided but not defined: -port", "a typo is"},
		{"bad seed", []string{"-seed", "x"}, 2, `invalid value "x" for flag -seed`, "not a number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr strings.Builder
			code := exitCode(run(tc.args, io.Discard, &stderr, nil), &stderr)
			if code != tc.code || !strings.Contains(stderr.String(), tc.stderr) {
				t.Errorf("%s: exit %d, stderr %q; want %d and %q", tc.reason, code, stderr.String(), tc.code, tc.stderr)
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

// The README's fakellm section sends one curl line per vendor path that
// needs one (Gemini streamed, Bedrock whole); each is sent, as written,
// to a served fakellm and answered in the vendor's shape.
func TestREADMECurlLines(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := []struct {
		name, re string
		check    func(resp *http.Response, body string) bool
	}{
		{"Gemini", `(?m)^curl -sN '(http://127\.0\.0\.1:8080)(/v1beta/models/[^']*:streamGenerateContent\?alt=sse)' -d '([^']*)'$`,
			func(resp *http.Response, b string) bool {
				events := strings.Split(strings.TrimSuffix(b, "\r\n\r\n"), "\r\n\r\n")
				last := events[len(events)-1]
				return resp.Header.Get("Content-Type") == "text/event-stream" && len(events) >= 2 &&
					strings.HasPrefix(events[0], `data: {"candidates":[{"content":{"parts":[{"text":`) &&
					strings.Contains(last, `"finishReason":"`) && strings.Contains(last, `"candidatesTokenCount":`)
			}},
		{"Bedrock", `(?m)^curl -s '(http://127\.0\.0\.1:8080)(/model/[^']*/converse)' -d '([^']*)'$`,
			func(resp *http.Response, b string) bool {
				return strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") &&
					strings.HasPrefix(b, `{"output":{"message":{"role":"assistant","content":[{"text":`) &&
					strings.Contains(b, `"stopReason":"`) && strings.Contains(b, `"usage":{"inputTokens":`)
			}},
	}
	pr, pw := io.Pipe()
	stop := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- run([]string{"serve", "-addr", "127.0.0.1:0", "-preset", "llama-4-maverick"}, pw, io.Discard, stop)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	u := urlRe.FindStringSubmatch(line)
	if err != nil || u == nil {
		t.Fatalf("printed %q (%v), want a loopback URL", line, err)
	}
	for _, l := range lines {
		m := regexp.MustCompile(l.re).FindSubmatch(readme)
		if m == nil {
			t.Errorf("README.md has no %s curl line", l.name)
			continue
		}
		resp, err := http.Post(u[1]+string(m[2]), "application/x-www-form-urlencoded", strings.NewReader(string(m[3])))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !l.check(resp, string(b)) {
			t.Errorf("%s: status %d, %s, body:\n%s", l.name, resp.StatusCode, resp.Header.Get("Content-Type"), b)
		}
	}
	close(stop)
	if err := <-errc; err != nil {
		t.Fatalf("run: %v", err)
	}
	http.DefaultClient.CloseIdleConnections()
}
