package fakeprovider

import (
	"testing"
	"testing/synctest"
	"time"
)

func TestFixedProfileTiming(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := mustNew(t, Profile{TTFT: Fixed(200 * time.Millisecond), ITL: Fixed(10 * time.Millisecond), OutputTokens: Fixed(64)})
		r := do(t, f.Client(), "http://fake", reqOpts{id: "r0", usage: true})
		if r.status != 200 || r.readErr != nil {
			t.Fatalf("status %d err %v body %s", r.status, r.readErr, r.body)
		}
		// first token at 200 ms; 63 more at 10 ms each: 200 + 630 = 830 ms
		if r.firstTok != 200*time.Millisecond || r.lastTok != 830*time.Millisecond {
			t.Errorf("first %v last %v, want 200ms and 830ms", r.firstTok, r.lastTok)
		}
		if r.tokens != 64 || r.finish != "stop" || !r.sawDone {
			t.Errorf("tokens %d finish %q done %v", r.tokens, r.finish, r.sawDone)
		}
		if _, c, _, ok := r.usage(); !ok || c != 64 {
			t.Errorf("usage completion %d ok %v", c, ok)
		}
		t.Log(fmtChunks(r.chunks[:3]))
	})
}
