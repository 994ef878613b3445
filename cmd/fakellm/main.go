// Command fakellm serves the tailguard fake provider over HTTP, so that any
// client in any language can meet cold starts, queueing, stalls and errors
// locally, and fits a profile to measured records:
//
//	go run ./cmd/fakellm serve -preset llama-4-maverick
//	go run ./cmd/fakellm serve -profile my.yaml -addr 127.0.0.1:9000 -seed 3
//	go run ./cmd/fakellm fit [-seed N] [-tail] [-mix M] [-force] records.jsonl > fitted.yaml
//
// serve is the default: flags without a subcommand serve (fakellm -preset
// NAME), and -fit FILE is the same as fit FILE.
//
// fit serves nothing: it fits a profile to latencytest records (JSONL, as
// Measure writes them; see package fit), writes it to stdout as YAML with
// comments saying where each number came from, and exits; serve it with
// -profile. -tail adds a generalised Pareto tail past the largest TTFT
// and ITL (fit.WithTail). -mix names the prompt mix the records were
// measured with, as class=prompt_tokens pairs ("short=200,long=6000") or
// "default" (fit.WithMix), so the fake counts prompt tokens as the engine
// did. fit checks its own profile (fit.FitReport.Check: a replay against
// the records, KS p >= 0.01 for each distribution): when the check fails
// it says so on stderr, writes nothing and exits 1, unless -force, which
// writes the profile anyway (the failure still on stderr and in the
// profile's header).
//
// It prints the base URL (OpenAI clients take URL+"/v1") and stops cleanly on
// SIGINT or SIGTERM, printing how many events it streamed and how late it
// wrote them (p50, p99, max: its own error, see fakeprovider.Lateness). It
// binds to loopback unless -addr says otherwise; an -addr without a host
// or a port (an unset variable, most likely) is an error, as is a -seed
// below -1. Errors exit with status 2, a failed fit check with 1; -h
// prints the usage and exits 0.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
	"github.com/tailguard/tailguard/fit"
	"github.com/tailguard/tailguard/latencytest"
)

func main() {
	os.Exit(exitCode(run(os.Args[1:], os.Stdout, os.Stderr, nil), os.Stderr))
}

// exitCode reports err on stderr and returns the exit status: 0 for none
// or for -h (the usage was printed), 2 otherwise.
func exitCode(err error, stderr io.Writer) int {
	var cf checkFailed
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &cf):
		fmt.Fprintln(stderr, "fakellm:", err)
		return 1
	default:
		fmt.Fprintln(stderr, "fakellm:", err)
		return 2
	}
}

// run dispatches to a subcommand: serve (the default) or fit.
func run(args []string, stdout, stderr io.Writer, stop <-chan struct{}) error {
	if len(args) > 0 {
		switch args[0] {
		case "serve":
			return serve(args[1:], stdout, stderr, stop)
		case "fit":
			return fitCmd(args[1:], stdout, stderr)
		}
		if !strings.HasPrefix(args[0], "-") {
			return fmt.Errorf("unknown subcommand %q: want serve or fit", args[0])
		}
	}
	return serve(args, stdout, stderr, stop)
}

// fitCmd fits a profile to one records file and writes it to stdout.
func fitCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("fakellm fit", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seed := fs.Int64("seed", -1, "random seed of the fitted profile, >= 0 (-1: the fit's default)")
	tail := fs.Bool("tail", false, "fit a generalised Pareto tail past the largest TTFT and ITL (fit.WithTail)")
	mix := fs.String("mix", "", `the records' prompt mix: "default" or class=prompt_tokens pairs, "short=200,long=6000" (fit.WithMix)`)
	force := fs.Bool("force", false, "write the profile even when fit's own check fails (exit 0)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("fit: give one records file (JSONL): fakellm fit [-seed N] [-tail] [-mix M] [-force] records.jsonl")
	}
	if *seed < -1 {
		return fmt.Errorf("-seed %d: want a seed >= 0, or -1 for the fit's default", *seed)
	}
	opts := []fit.Option{fit.WithTail(*tail)}
	if *mix != "" {
		m, err := fit.ParseMix(*mix)
		if err != nil {
			return fmt.Errorf("-mix: %w", err)
		}
		opts = append(opts, fit.WithMix(m))
	}
	return fitRecords(fs.Arg(0), *seed, *force, stdout, stderr, opts...)
}

// checkFailed is fit's own check failing: exit status 1.
type checkFailed struct{ check fit.Check }

func (e checkFailed) Error() string {
	return e.check.String() + " (nothing written; -force writes it anyway)"
}

// fitRecords fits a profile to the records at path and writes it as
// YAML; when fit's own check fails it writes nothing and returns
// checkFailed, unless force.
func fitRecords(path string, seed int64, force bool, stdout, stderr io.Writer, extra ...fit.Option) error {
	recs, err := latencytest.LoadRecords(path)
	if err != nil {
		return err
	}
	opts := extra
	if seed >= 0 {
		opts = append(opts, fit.WithSeed(uint64(seed)))
	}
	p, rep, err := fit.Fit(recs, opts...)
	if err != nil {
		return err
	}
	if c := rep.Check(fit.DefaultCheckAlpha); !c.OK() {
		if !force {
			return checkFailed{c}
		}
		fmt.Fprintln(stderr, "fakellm: "+c.String()+" (written anyway: -force)")
	}
	return fit.WriteProfile(stdout, p, rep)
}

// serve parses serve's flags, serves until a signal (or stop, in tests)
// and returns.
func serve(args []string, stdout, stderr io.Writer, stop <-chan struct{}) error {
	fs := flag.NewFlagSet("fakellm serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage of fakellm:\n  fakellm [serve] (-preset NAME | -profile FILE) [-addr HOST:PORT] [-seed N]\n  fakellm fit [-seed N] [-tail] [-mix M] [-force] records.jsonl\nserve flags:\n")
		fs.PrintDefaults()
	}
	addr := fs.String("addr", "127.0.0.1:8080", "listen address (host:port); loopback unless you need otherwise; give the host (0.0.0.0 for every interface)")
	profile := fs.String("profile", "", "YAML profile file")
	preset := fs.String("preset", "", "preset name: "+strings.Join(fakeprovider.Presets(), ", "))
	seed := fs.Int64("seed", -1, "random seed, >= 0 (-1: the profile's)")
	fitPath := fs.String("fit", "", "the same as: fakellm fit FILE")
	if err := fs.Parse(args); err != nil {
		return err // the flag package has printed what is wrong (or the usage, for -h)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *fitPath != "" {
		if *profile != "" || *preset != "" {
			return errors.New("give -fit alone: it writes a profile and serves nothing")
		}
		return fitRecords(*fitPath, *seed, false, stdout, stderr)
	}
	if err := checkAddr(*addr); err != nil {
		return err
	}
	if *seed < -1 {
		return fmt.Errorf("-seed %d: want a seed >= 0, or -1 for the profile's", *seed)
	}
	var p fakeprovider.Profile
	var err error
	switch {
	case *profile != "" && *preset != "":
		return errors.New("give -profile or -preset, not both")
	case *profile != "":
		p, err = fakeprovider.LoadProfile(*profile)
	case *preset != "":
		p, err = fakeprovider.Preset(*preset)
	default:
		return errors.New("give -profile FILE or -preset NAME (presets: " + strings.Join(fakeprovider.Presets(), ", ") + ")")
	}
	if err != nil {
		return err
	}
	if *seed >= 0 {
		p.Seed = uint64(*seed)
	}
	f := fakeprovider.New(p)
	defer f.Close()
	srv, err := fakeprovider.StartServer(f, *addr)
	if err != nil {
		return err
	}
	defer srv.Close()
	// Listen for signals before printing the URL: whoever reads the URL may
	// signal at once.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	fmt.Fprintf(stdout, "fakellm: serving model %q on %s (OpenAI base URL %s/v1)\n", f.Profile().Model, srv.URL, srv.URL)
	select {
	case s := <-sig:
		fmt.Fprintf(stdout, "fakellm: %v: stopping\n", s)
	case <-stop:
	}
	l := f.Lateness() // how late the fake wrote its events: its own error
	fmt.Fprintf(stdout, "fakellm: %d events streamed, lateness p50 %v p99 %v max %v\n",
		l.Events, l.P50.Round(time.Microsecond), l.P99.Round(time.Microsecond), l.Max.Round(time.Microsecond))
	return nil
}

// checkAddr refuses a listen address that is most likely an unset variable
// (-addr "$ADDR" or -addr ":$PORT"): net.Listen would read an empty host as
// every interface and an empty port as a random one.
func checkAddr(addr string) error {
	if addr == "" {
		return errors.New(`-addr is empty (an unset variable?): give host:port, e.g. 127.0.0.1:8080; fakellm never listens on every interface unless the host says so`)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("-addr %q: want host:port, e.g. 127.0.0.1:8080: %w", addr, err)
	}
	if host == "" {
		return fmt.Errorf("-addr %q has no host (an unset variable?): write 127.0.0.1%s for loopback or 0.0.0.0%s for every interface", addr, addr, addr)
	}
	if port == "" {
		return fmt.Errorf("-addr %q has no port (an unset variable?): write %s8080, or %s0 for a free port", addr, addr, addr)
	}
	return nil
}
