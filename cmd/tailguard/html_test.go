package main

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// report -html and judge -html write one self-contained page each.
func TestHTMLPages(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	code, out, errs := runCmd("report", "-html", page, filepath.Join(fixtures, "vllm.json"))
	if code != 0 || !strings.Contains(out, "html: "+page) {
		t.Fatalf("report -html: exit %d\n%s%s", code, out, errs)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<!DOCTYPE html>", "Distributions", "http_429", "vLLM bench serve", "<svg ", "default-src 'none'"} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("report -html lacks %q", want)
		}
	}
	if bytes.Contains(b, []byte(`class="verdict`)) {
		t.Error("report -html shows a verdict: report judges nothing")
	}

	writeVLLM(t, filepath.Join(dir, "run.json"), 200, 0.2)
	spec := writeFile(t, filepath.Join(dir, "fail.yaml"), "target: {records: run.json}\nobjectives:\n  ttft: {p99: 199ms}\n")
	judged := filepath.Join(dir, "judged.html")
	if code, out, errs := runCmd("judge", "-html", judged, spec); code != 1 {
		t.Fatalf("judge -html: exit %d, want 1\n%s%s", code, out, errs)
	}
	b, err = os.ReadFile(judged)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<span class="verdict FAIL">FAIL</span>`, "ttft p99 &lt;= 199.0ms", `<tr class="fail">`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("judge -html lacks %q", want)
		}
	}
	// A level judge cannot decide (too few requests for p99) says so on
	// the page, as on the terminal.
	writeVLLM(t, filepath.Join(dir, "few.json"), 40, 0.2)
	few := writeFile(t, filepath.Join(dir, "few.yaml"), "target: {records: few.json}\nobjectives:\n  ttft: {p99: 1s}\n")
	undecided := filepath.Join(dir, "few.html")
	if code, out, errs := runCmd("judge", "-html", undecided, few); code != 2 {
		t.Fatalf("judge -html on 40 requests: exit %d, want 2\n%s%s", code, out, errs)
	}
	if b, err := os.ReadFile(undecided); err != nil || !bytes.Contains(b, []byte("CANNOT JUDGE")) || !bytes.Contains(b, []byte("needs n &gt;= 100")) {
		t.Errorf("judge -html of an undecided level does not say so (%v)", err)
	}
	if code, _, errs := runCmd("report", "-html", filepath.Join(dir, "no", "such", "dir.html"), filepath.Join(fixtures, "vllm.json")); code != 2 || !strings.Contains(errs, "dir.html") {
		t.Errorf("report -html into a missing directory: exit %d, want 2 naming the file\n%s", code, errs)
	}
}

// chromium finds a headless-capable Chromium, or skips.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Chromium on PATH (CI installs it)")
	return ""
}

// headless runs Chromium on a page file with args, bounded in time.
func headless(t *testing.T, browser, page string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
		"--user-data-dir=" + t.TempDir(), "--host-resolver-rules=MAP * ~NOTFOUND"}
	cmd := exec.CommandContext(ctx, browser, append(append(base, args...), "file://"+page)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.Bytes())
	}
	return out
}

var (
	scrollWidth = regexp.MustCompile(`data-scroll-width="(\d+)"`)
	innerWidth  = regexp.MustCompile(`data-inner-width="(\d+)"`)
)

// The judged page in a real browser: the DOM holds the verdict table, a
// phone-wide window (390 px) does not scroll sideways (tables scroll in
// their own box), it prints (to PDF), and a screenshot shows the verdict. With
// TAILGUARD_SCREENSHOT=FILE the screenshot is also written there (the
// README's picture: docs/report-html.png).
func TestHTMLInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser (about 8 s): not under -short")
	}
	browser := chromium(t)
	dir := t.TempDir()
	t.Chdir(dir) // the spec's name heads the page: short, as a user types it
	writeTail(t, "run.json", 400)
	spec := writeFile(t, "slo.yaml", "target: {records: run.json}\nobjectives:\n  ttft: {p50: 300ms, p99: 800ms}\n  total: {p95: 1500ms}\n  error_rate: {max: 2%}\n")
	page := filepath.Join(dir, "report.html")
	if code, out, errs := runCmd("judge", "-html", page, spec); code != 1 {
		t.Fatalf("judge -html: exit %d\n%s%s", code, out, errs)
	}
	dom := headless(t, browser, page, "--dump-dom")
	for _, want := range []string{"<h2>Verdict</h2>", "ttft p99 &lt;= 800.0ms", "FAIL", "http_429"} {
		if !bytes.Contains(dom, []byte(want)) {
			t.Errorf("the rendered DOM lacks %q", want)
		}
	}

	// Measure the page's width in a phone's window: a copy of the page
	// with a probe that writes the document's scroll width into the DOM.
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	probe := filepath.Join(dir, "probe.html")
	probed := bytes.Replace(b, []byte("</body>"), []byte(`<script>document.body.setAttribute("data-scroll-width", document.documentElement.scrollWidth); document.body.setAttribute("data-inner-width", window.innerWidth)</script></body>`), 1)
	if err := os.WriteFile(probe, probed, 0o644); err != nil {
		t.Fatal(err)
	}
	dom = headless(t, browser, probe, "--window-size=390,844", "--dump-dom")
	sw, iw := scrollWidth.FindSubmatch(dom), innerWidth.FindSubmatch(dom)
	if sw == nil || iw == nil {
		t.Fatal("the probe did not run")
	}
	// Headless Chromium's window has a minimum width (500 px here): the
	// page must fit the window it got, whatever that is.
	w, _ := strconv.Atoi(string(sw[1]))
	win, _ := strconv.Atoi(string(iw[1]))
	if win > 600 {
		t.Fatalf("asked for a 390 px window, got %d px: not a phone's width", win)
	}
	if w > win {
		t.Errorf("in a %d px window the page is %d px wide: it scrolls sideways", win, w)
	}

	// Printed: Chromium's print to PDF lays the page out for paper.
	pdf := filepath.Join(dir, "report.pdf")
	headless(t, browser, page, "--no-pdf-header-footer", "--print-to-pdf="+pdf)
	if b, err := os.ReadFile(pdf); err != nil || !bytes.HasPrefix(b, []byte("%PDF-")) || len(b) < 10_000 {
		t.Errorf("print to PDF: %v, %d bytes", err, len(b))
	}

	shot := filepath.Join(dir, "shot.png")
	headless(t, browser, page, "--window-size=1000,1400", "--hide-scrollbars", "--screenshot="+shot)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if s := img.Bounds().Size(); s.X != 1000 || s.Y != 1400 {
		t.Errorf("screenshot %v, want 1000x1400", s)
	}
	red := 0 // the FAIL badge and failed rows
	for y := 0; y < 300; y++ {
		for x := 0; x < 1000; x++ {
			r, g, b, _ := img.At(x, y).RGBA()
			if r>>8 > 150 && g>>8 < 90 && b>>8 < 90 {
				red++
			}
		}
	}
	if red < 50 {
		t.Errorf("the screenshot's top shows %d red pixels: no FAIL badge drawn", red)
	}
	if dst := os.Getenv("TAILGUARD_SCREENSHOT"); dst != "" {
		png, err := os.ReadFile(shot)
		if err == nil {
			err = os.WriteFile(dst, png, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// writeTail writes a vllm bench serve result of n requests whose TTFTs
// spread over 150-400 ms with one request in 25 near 1.2 s, and one in
// 100 refused with HTTP 429.
func writeTail(t *testing.T, path string, n int) {
	t.Helper()
	var ttfts []float64
	var itls [][]float64
	var errs []string
	var outs []int
	for i := range n {
		ttft := 0.15 + 0.25*float64((i*37)%100)/100
		if i%25 == 7 {
			ttft = 1.1 + 0.2*float64((i*13)%10)/10
		}
		e := ""
		if i%100 == 42 {
			e = "HTTP 429: rate limited"
		}
		gaps := make([]float64, 20)
		for j := range gaps {
			gaps[j] = 0.02 + 0.01*float64((i+j)%5)/5
		}
		ttfts, itls, errs, outs = append(ttfts, ttft), append(itls, gaps), append(errs, e), append(outs, 21)
	}
	writeVLLMRequests(t, path, ttfts, itls, errs, outs)
}
