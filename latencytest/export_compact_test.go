package latencytest

import (
	"context"
	"os"
	"path/filepath"
)

// RunStreamed runs b as Measure does for compact records, streaming them
// to path and ending the file with its end line; full records are written
// to path when the run ends.
func RunStreamed(b Batch, p Provider, path string) (*Result, error) {
	ctx, st := withRecordStream(context.Background(), filepath.Dir(path), b.Label, false)
	st.path = path
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
