//go:build race

package redact

// raceEnabled: sync.Pool drops buffers at random under the race detector.
const raceEnabled = true
