// Command fakellm serves the tailguard fake provider over HTTP, so that any
// client in any language can meet cold starts, queueing, stalls and errors
// locally:
//
//	go run ./fakeprovider/cmd/fakellm -preset llama-4-maverick
//	go run ./fakeprovider/cmd/fakellm -profile my.yaml -addr 127.0.0.1:9000 -seed 3
//
// It prints the base URL (OpenAI clients take URL+"/v1") and stops cleanly on
// SIGINT or SIGTERM. It binds to loopback unless -addr says otherwise.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/tailguard/tailguard/fakeprovider"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr, nil); err != nil {
		fmt.Fprintln(os.Stderr, "fakellm:", err)
		os.Exit(2)
	}
}

// run parses args, serves until a signal (or stop, in tests) and returns.
func run(args []string, stdout, stderr io.Writer, stop <-chan struct{}) error {
	fs := flag.NewFlagSet("fakellm", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "listen address (host:port); loopback unless you need otherwise")
	profile := fs.String("profile", "", "YAML profile file")
	preset := fs.String("preset", "", "preset name: "+strings.Join(fakeprovider.Presets(), ", "))
	seed := fs.Int64("seed", -1, "random seed (default: the profile's)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
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
	return nil
}
