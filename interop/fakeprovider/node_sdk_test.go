package fakeprovider_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/fakeprovider"
)

// Pinned versions of the Node packages TestNodeSDKs installs: the official
// SDKs, the Vercel AI SDK with its OpenAI provider (zod is its peer
// dependency), Google's Gemini SDK (TestNodeGeminiSDK) and the AWS SDK's
// Bedrock runtime client (TestNodeBedrockSDK).
var nodePackages = []string{
	"openai@7.55.0",
	"@anthropic-ai/sdk@1.10.0",
	"ai@7.0.173",
	"@ai-sdk/openai@4.0.118",
	"zod@4.6.7",
	"@google/genai@3.6.1",
	"@aws-sdk/client-bedrock-runtime@3.1178.0",
}

// nodeScript returns node and the path of a copy of testdata/node/name
// placed beside the installed packages (Node resolves imports from the
// script's directory upwards). It skips under -short, when node or npm is
// missing, and when the packages cannot be installed (offline); they are
// installed once, within 3 minutes, into the user cache directory
// (TAILGUARD_NODE_SDK_DIR overrides it).
func nodeScript(t *testing.T, name string) (node, script string) {
	t.Helper()
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
	if !nodeInstalled(dir) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		args := append([]string{"install", "--no-audit", "--no-fund", "--silent", "--prefix", dir}, nodePackages...)
		if out, err := exec.CommandContext(ctx, npm, args...).CombinedOutput(); err != nil {
			t.Skipf("cannot install %v (offline?): %v\n%s", nodePackages, err, out)
		}
	}
	src, err := os.ReadFile(filepath.Join("testdata", "node", name))
	if err != nil {
		t.Fatal(err)
	}
	script = filepath.Join(dir, name)
	if err := os.WriteFile(script, src, 0o644); err != nil {
		t.Fatal(err)
	}
	return node, script
}

// nodeInstalled reports whether every pinned package is installed in dir
// at its pinned version.
func nodeInstalled(dir string) bool {
	for _, pkg := range nodePackages {
		at := strings.LastIndex(pkg, "@")
		b, err := os.ReadFile(filepath.Join(dir, "node_modules", filepath.FromSlash(pkg[:at]), "package.json"))
		if err != nil {
			return false
		}
		var meta struct {
			Version string `json:"version"`
		}
		if json.Unmarshal(b, &meta) != nil || meta.Version != pkg[at+1:] {
			return false
		}
	}
	return true
}

// runNode runs script with env added, within 2 minutes, and returns its
// standard output; it fails the test with the whole output on an error.
func runNode(t *testing.T, node, script string, env ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s%s", filepath.Base(script), err, out, stderr.Bytes())
	}
	return out
}

// TestNodeSDKs runs testdata/node/sdk-check.mjs: the official Node SDKs
// (openai's Responses API, @anthropic-ai/sdk's Messages with a 529 retry)
// against fakeprovider servers on loopback. It skips as nodeScript says.
func TestNodeSDKs(t *testing.T) {
	node, copied := nodeScript(t, "sdk-check.mjs")
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

	out := runNode(t, node, copied, "BASE_URL="+srv.URL, "TOOL_BASE_URL="+srvTools.URL)
	t.Logf("node %v: %s", nodePackages[:2], out)
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

// aiSDKCall is one line of ai-sdk-check.mjs's output.
type aiSDKCall struct {
	Call      string `json:"call"`
	Text      string `json:"text"`
	Reasoning string `json:"reasoning"`
	Finish    string `json:"finish"`
	Calls     int    `json:"calls"`
	IDs       int    `json:"ids"`
	Usage     struct {
		Input, Output, Reasoning, Cached int
	} `json:"usage"`
}

// TestVercelAISDK runs testdata/node/ai-sdk-check.mjs: the Vercel AI SDK's
// default openai(model) (the Responses API) through streamText and
// generateText against fakeprovider servers on loopback, text and tool
// calls (two parallel calls an answer). The text, reasoning and usage the
// SDK hands its caller must be what the fake answers a plain Responses
// request with, and the calls and tokens what the fake served. It skips
// as nodeScript says.
func TestVercelAISDK(t *testing.T) {
	node, script := nodeScript(t, "ai-sdk-check.mjs")
	fast := func(p fakeprovider.Profile) *fakeprovider.Fake {
		p.TTFT, p.ITL = fakeprovider.Fixed(time.Millisecond), fakeprovider.Fixed(100*time.Microsecond)
		f := fakeprovider.New(p)
		t.Cleanup(f.Close)
		return f
	}
	pt := protoProfile(true)
	pt.ToolCalls.Parallel = fakeprovider.Fixed(2)
	f, ft := fast(protoProfile(false)), fast(pt)
	srv, srvTools := fakeprovider.NewServer(f), fakeprovider.NewServer(ft)
	t.Cleanup(srv.Close)
	t.Cleanup(srvTools.Close)
	out := runNode(t, node, script, "BASE_URL="+srv.URL, "TOOL_BASE_URL="+srvTools.URL)
	t.Logf("node %v: %s", nodePackages[2:4], out)

	// The reference: a plain Responses request to a fresh fake of the
	// same profile (the prompt is shorter than a cache block: no hit).
	ref := fast(protoProfile(false))
	resp, err := ref.Client().Post("http://fake/v1/responses", "application/json",
		strings.NewReader(`{"model":"fake-model","input":"Say something short."}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var want struct {
		Output []struct {
			Type    string `json:"type"`
			Summary []struct {
				Text string `json:"text"`
			} `json:"summary"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"output"`
		Usage struct {
			InputTokens  int `json:"input_tokens"`
			OutputTokens int `json:"output_tokens"`
		} `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&want); err != nil || len(want.Output) != 2 {
		t.Fatalf("reference answer: %v, %+v", err, want)
	}
	wantReasoning, wantText := want.Output[0].Summary[0].Text, want.Output[1].Content[0].Text

	served := map[string]fakeprovider.Served{}
	for _, sv := range append(f.Served(), ft.Served()...) {
		if _, dup := served[sv.ID]; dup {
			t.Errorf("%s served twice: the SDK retried", sv.ID)
		}
		served[sv.ID] = sv
	}
	ids := map[string]string{"streamText": "ai-stream", "generateText": "ai-generate",
		"generateText-tools": "ai-tool", "streamText-tools": "ai-tool-stream"}
	seen := 0
	for line := range bytes.Lines(out) {
		var c aiSDKCall
		if err := json.Unmarshal(line, &c); err != nil {
			t.Fatalf("ai-sdk-check.mjs printed %q: %v", line, err)
		}
		sv, ok := served[ids[c.Call]]
		if !ok {
			t.Fatalf("%s: the fake served no %q", c.Call, ids[c.Call])
		}
		seen++
		if sv.Protocol != "responses" || sv.Status != 200 || sv.Canceled {
			t.Errorf("%s: served %+v, want a whole Responses answer", c.Call, sv)
		}
		if c.Usage.Output != sv.Tokens || c.Usage.Reasoning != sv.ReasoningTokens || c.Usage.Input != want.Usage.InputTokens || c.Usage.Cached != 0 {
			t.Errorf("%s: usage %+v, want %d input, %d output (%d reasoning), 0 cached", c.Call, c.Usage,
				want.Usage.InputTokens, sv.Tokens, sv.ReasoningTokens)
		}
		if strings.HasSuffix(c.Call, "-tools") {
			if sv.ToolCalls != 2 || c.Calls != sv.ToolCalls || c.IDs != c.Calls {
				t.Errorf("%s: %d tool calls (%d ids), the fake made %d", c.Call, c.Calls, c.IDs, sv.ToolCalls)
			}
			continue
		}
		if c.Text != wantText || c.Reasoning != wantReasoning || c.Usage.Output != want.Usage.OutputTokens {
			t.Errorf("%s: text %q, reasoning %q, %d tokens; want %q, %q, %d", c.Call, c.Text, c.Reasoning,
				c.Usage.Output, wantText, wantReasoning, want.Usage.OutputTokens)
		}
	}
	if seen != len(ids) {
		t.Errorf("ai-sdk-check.mjs reported %d calls, want %d", seen, len(ids))
	}
}
