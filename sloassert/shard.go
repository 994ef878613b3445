package sloassert

import (
	"fmt"

	"github.com/tailguard/tailguard/latencytest"
)

// AllowShard judges a result measured as one shard of a split run
// (latencytest.Result.Shard, set under TAILGUARD_SHARD or a runner's
// Shard field) as if it were the whole run. By default every objective
// fails on a shard, with "shard i of n: merge the shards, then judge":
// a shard holds one part of the requests, sent at a fraction of the
// load, so a verdict on it says nothing of the run (an SLO the whole run
// fails can pass on each part). Merge the shards' records with
// records.Merge (or a spec's records target) and judge the
// merged result; allow a shard only for a check meant to hold per shard
// (a smoke test that each machine reaches the endpoint). The report's
// first line names the shard either way. It is also how Compare.Evaluate
// and Regression accept a shard on either side.
func AllowShard() Option { return func(o *options) { o.allowShard = true } }

// shardText is "shard i of n" for a split run's shard, "" otherwise.
func shardText(sh latencytest.Shard) string {
	if sh.Count <= 1 {
		return ""
	}
	return fmt.Sprintf("shard %d of %d", sh.Index, sh.Count)
}

// judgeShard applies the shard rule to a report's outcomes, one per
// objective (opts[i] is outcome i's options): on a shard, an outcome
// whose objective does not allow it fails. It records the shard for the
// report's first line.
func judgeShard(rep *Report, sh latencytest.Shard, opts func(i int) options) {
	rep.Shard = shardText(sh)
	if rep.Shard == "" {
		return
	}
	for i := range rep.Outcomes {
		out := &rep.Outcomes[i]
		if opts(i).allowShard {
			out.addNote(rep.Shard + " judged alone (AllowShard)")
			continue
		}
		out.OK, rep.shardRefused = false, true
		if out.Verdict == Pass {
			out.Verdict = Fail
		}
		out.addNote(rep.Shard + ": merge the shards, then judge (records.Merge); AllowShard() judges one shard alone")
	}
}
