package fakeprovider

import (
	"context"

	"go.yaml.in/yaml/v3"
)

// AfterClose is what the fake does when a client closes a request it is
// generating (a client's cancel). By default it stops within the event it
// is generating, as a server that aborts a request whose connection
// closed does. With KeepGenerating, a probability drawn per trace ID from
// Profile.Seed on a random stream of its own, it goes on generating the
// rest of the answer at its planned pace for nobody, holding its slot
// until the answer's planned end, as a server that never looks at its
// connections does: Served.AfterClose counts the tokens generated after
// it saw the close (a cost: tokens paid for and never read), and requests
// queued behind it wait for the slot.
//
// In YAML: after_close: {keep_generating: true} (every request; false:
// none), or a share: {keep_generating: 30%}.
type AfterClose struct {
	// KeepGenerating is a fraction or a percentage. Default 0.
	KeepGenerating float64 `yaml:"keep_generating"`
}

// UnmarshalYAML decodes after_close strictly; keep_generating is true,
// false, a fraction or a percentage (see parseProbability).
func (a *AfterClose) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return nodeErr(n, "after_close: want a map such as {keep_generating: true}")
	}
	var raw struct {
		KeepGenerating yaml.Node `yaml:"keep_generating"`
	}
	if err := strictDecode(n, &raw, "after_close", "keep_generating"); err != nil {
		return err
	}
	v := &raw.KeepGenerating
	switch {
	case v.Kind == 0: // not given
	case v.ShortTag() == "!!bool":
		var b bool
		if err := v.Decode(&b); err != nil {
			return err
		}
		a.KeepGenerating = map[bool]float64{false: 0, true: 1}[b]
	default:
		f, err := parseProbability(v, "share of requests (or true)")
		if err != nil {
			return err
		}
		a.KeepGenerating = f
	}
	return nil
}

// keepGenerating draws whether the request with key generates on after
// its client's close (AfterClose.KeepGenerating).
func keepGenerating(p *Profile, key string) bool {
	share := p.AfterClose.KeepGenerating
	return share > 0 && planRand(p, key, streamAfterClose).Float64() < share
}

// generating is the context a request that keeps generating after its
// client's close (plan.keep) generates under: ctx's values, ended when
// closed (the fake's Close) ends, not by the client. stop releases it.
func generating(ctx, closed context.Context) (gen context.Context, stop func()) {
	gen, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stopClose := context.AfterFunc(closed, cancel)
	return gen, func() { stopClose(); cancel() }
}

// gone reports whether the client closed s's request and s keeps
// generating: its events are dropped, not written, from then on.
func gone(s *session) bool { return s.pl.keep && s.atClose.Load() >= 0 }
