package fakeprovider_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
)

// Pinned versions of the official Node SDKs TestNodeSDKs installs.
const (
	nodeOpenAI    = "openai@7.55.0"
	nodeAnthropic = "@anthropic-ai/sdk@1.10.0"
)

// TestNodeSDKs runs testdata/node/sdk-check.mjs: the official Node SDKs
// (openai's Responses API, @anthropic-ai/sdk's Messages with a 529 retry)
// against fakeprovider servers on loopback. It skips under -short, when
// node or npm is missing, and when the packages cannot be installed
// (offline); they are installed once into the user cache directory
// (TAILGUARD_NODE_SDK_DIR overrides it).
func TestNodeSDKs(t *testing.T) {
	if testing.Short() {
		t.Skip("installs npm packages: not under -short")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is not installed")
	}
	dir := os.Getenv("TAILGUARD_NODE_SDK_DIR")
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			t.Skipf("no cache directory for the npm packages: %v", err)
		}
		dir = filepath.Join(cache, "tailguard-node-sdk-check")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Skipf("cannot create %s: %v", dir, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@anthropic-ai", "sdk", "package.json")); err != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund", "--silent", "--prefix", dir, nodeOpenAI, nodeAnthropic)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Skipf("cannot install %s and %s (offline?): %v\n%s", nodeOpenAI, nodeAnthropic, err, out)
		}
	}
	script, err := filepath.Abs("testdata/node/sdk-check.mjs")
	if err != nil {
		t.Fatal(err)
	}
	// Node resolves imports from the script's directory upwards: run a
	// copy placed beside the installed packages.
	copied := filepath.Join(dir, "sdk-check.mjs")
	src, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(copied, src, 0o644); err != nil {
		t.Fatal(err)
	}

	p := protoProfile(false)
	p.TTFT, p.ITL = fakeprovider.Fixed(time.Millisecond), fakeprovider.Fixed(100*time.Microsecond)
	p.Script = []fakeprovider.ScriptEntry{{ID: "node-529", Status: 529, Attempts: 1}, {ID: "node-529-always", Status: 529}}
	f := fakeprovider.New(p)
	t.Cleanup(f.Close)
	srv := fakeprovider.NewServer(f)
	t.Cleanup(srv.Close)
	pt := protoProfile(true)
	pt.TTFT, pt.ITL = fakeprovider.Fixed(time.Millisecond), fakeprovider.Fixed(100*time.Microsecond)
	ft := fakeprovider.New(pt)
	t.Cleanup(ft.Close)
	srvTools := fakeprovider.NewServer(ft)
	t.Cleanup(srvTools.Close)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, copied)
	cmd.Env = append(os.Environ(), "BASE_URL="+srv.URL, "TOOL_BASE_URL="+srvTools.URL)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node SDK check: %v\n%s", err, out)
	}
	t.Logf("node %s: %s", nodeOpenAI+" "+nodeAnthropic, out)
	n := 0
	for _, sv := range f.Served() {
		if sv.ID == "node-529" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("node-529 served %d times, want 2 (a 529, then the SDK's retry)", n)
	}
}
