package slospec

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tailguard/tailguard/agent"
	"github.com/tailguard/tailguard/latencytest"
)

// writeTasks writes every copy with its task, stage, branch and the
// critical path to tasks.json, answers left out, and leaves the result
// it was given as it was.
func TestWriteTasks(t *testing.T) {
	rec := &latencytest.Record{ID: "task00-plan", Total: time.Second, Content: "the secret plan"}
	res := &agent.Result{Tasks: []agent.TaskRun{{ID: "task00", Total: time.Second, Critical: []int{0},
		Steps: []agent.StepRun{{ID: "task00-plan", Path: "plan", Step: "plan", Kind: agent.KindModel, Stage: 0, End: time.Second, Record: rec}}}}}
	where := writeTasks(t, res)
	path := filepath.Join(t.ArtifactDir(), "tasks.json")
	if !strings.HasPrefix(where, path) {
		t.Errorf("raw records %q, want %s", where, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Tasks []agent.TaskRun }
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Tasks) != 1 || got.Tasks[0].Steps[0].Record.Total != time.Second || got.Tasks[0].Critical[0] != 0 || strings.Contains(string(b), "secret") {
		t.Errorf("tasks.json: %s", b)
	}
	if rec.Content != "the secret plan" {
		t.Error("writeTasks changed the result's record")
	}
}
