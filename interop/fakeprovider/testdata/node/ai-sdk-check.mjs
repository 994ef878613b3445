// Drives a fake provider with the Vercel AI SDK, unchanged: the default
// model of @ai-sdk/openai, openai(model), which speaks the Responses API,
// through streamText and generateText. Run by TestNodeSDKs with BASE_URL
// set to a fakeprovider server (no trailing /v1) and TOOL_BASE_URL to one
// whose answers are all tool calls; prints one JSON line per call for the
// test to compare with what the fake served, and exits non-zero with a
// message on the first failure.
import { streamText, generateText, jsonSchema, tool } from "ai";
import { createOpenAI } from "@ai-sdk/openai";

const fail = (msg) => { console.error("FAIL: " + msg); process.exit(1); };
const check = (ok, msg) => { if (!ok) fail(msg); };
const headers = (id) => ({ "X-Request-ID": id });
const prompt = "Say something short.";
const report = (call, r) => console.log(JSON.stringify({ call, ...r }));
const usageOf = (u) => ({ input: u.inputTokens, output: u.outputTokens,
  reasoning: u.outputTokenDetails?.reasoningTokens ?? u.reasoningTokens, cached: u.inputTokenDetails?.cacheReadTokens ?? u.cachedInputTokens });

const openai = createOpenAI({ baseURL: process.env.BASE_URL + "/v1", apiKey: "test-key" });

// streamText: text deltas in order, usage and finish reason at the end.
{
  const s = streamText({ model: openai("fake-model"), prompt, maxRetries: 0, headers: headers("ai-stream") });
  let text = "", deltas = 0;
  for await (const d of s.textStream) { text += d; deltas++; }
  const finish = await s.finishReason;
  check(finish === "stop", "streamText: finish " + finish);
  check(deltas > 1, "streamText: " + deltas + " text deltas");
  report("streamText", { text, deltas, finish, usage: usageOf(await s.usage), reasoning: await s.reasoningText });
}

// generateText: the same answer, not streamed.
{
  const g = await generateText({ model: openai("fake-model"), prompt, maxRetries: 0, headers: headers("ai-generate") });
  check(g.finishReason === "stop", "generateText: finish " + g.finishReason);
  report("generateText", { text: g.text, finish: g.finishReason, usage: usageOf(g.usage), reasoning: g.reasoningText });
}

// Tool calls, streamed and not: every call the fake made reaches the
// caller with its name and parsed arguments (no execute: the SDK stops
// after the first step).
{
  const tools = createOpenAI({ baseURL: process.env.TOOL_BASE_URL + "/v1", apiKey: "test-key" });
  const search = tool({ description: "search", inputSchema: jsonSchema({ type: "object", properties: { query: { type: "string" } } }) });
  const g = await generateText({ model: tools("fake-model"), prompt, tools: { search }, maxRetries: 0, headers: headers("ai-tool") });
  check(g.finishReason === "tool-calls", "generateText tools: finish " + g.finishReason);
  check(g.toolCalls.every((c) => c.toolName === "search" && typeof c.input === "object"), "generateText tools: " + JSON.stringify(g.toolCalls));
  report("generateText-tools", { calls: g.toolCalls.length, ids: new Set(g.toolCalls.map((c) => c.toolCallId)).size, usage: usageOf(g.usage) });

  const s = streamText({ model: tools("fake-model"), prompt, tools: { search }, maxRetries: 0, headers: headers("ai-tool-stream") });
  const calls = await s.toolCalls;
  check((await s.finishReason) === "tool-calls", "streamText tools: finish " + (await s.finishReason));
  check(calls.every((c) => c.toolName === "search" && typeof c.input === "object"), "streamText tools: " + JSON.stringify(calls));
  report("streamText-tools", { calls: calls.length, ids: new Set(calls.map((c) => c.toolCallId)).size, usage: usageOf(await s.usage) });
}
