// Package cost prices a latencytest run from the token counts its answers
// reported: [Calls] per call, [Chains] per agent chain. Its [Report] says
// what a useful answer (or a completed task) really costs once the failed,
// empty and refused ones are paid for.
//
// # Units
//
// [Prices] are dollars per million tokens. Cached prompt tokens are billed
// at InputPerMillion less CachedDiscount (a fraction). Reasoning tokens
// count as completion tokens, as the usage reports count and bill them.
// A call that reported no usage is left out of the dollars and counted in
// Report.Unpriced: its tokens are unknown, never zero.
package cost
