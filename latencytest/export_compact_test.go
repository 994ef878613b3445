package latencytest

import (
	"context"
	"os"
	"path/filepath"

	"github.com/tailguard/tailguard/internal/compact"
)

// RunStreamed runs b as Measure does for compact records, streaming them
// to path and ending the file with its end line; full records are written
// to path when the run ends.
func RunStreamed(b Batch, p Provider, path string) (*Result, error) {
	ctx, st := withRecordStream(context.Background(), filepath.Dir(path), b.Label, false)
	st.File = path
	r, err := b.Run(ctx, p)
	if err != nil {
		return nil, err
	}
	if got, err := r.stream.finish(r.Shard); err != nil || got != "" {
		return r, err
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return r, r.WriteRecords(f, false)
}

// RetainedBytes is r's retained bytes (see Result.retainedBytes).
func RetainedBytes(r *Result) int { return r.retainedBytes() }

// ITLSketch is the sketch of a compact result's inter-token gaps (nil for
// full records).
func ITLSketch(r *Result) *compact.Sketch {
	if r.compact == nil {
		return nil
	}
	return r.compact.ITL()
}
