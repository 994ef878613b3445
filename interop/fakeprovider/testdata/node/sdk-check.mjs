// Drives a fake provider with the official Node SDKs, unchanged: openai
// (the Responses API, streamed and not) and @anthropic-ai/sdk (Messages,
// streamed and not, and a 529 retried to success). Run by TestNodeSDKs
// with BASE_URL set to a fakeprovider server (no trailing /v1) and
// TOOL_BASE_URL to one whose answers are all tool calls; exits
// non-zero with a message on the first failure.
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";

const base = process.env.BASE_URL;
const fail = (msg) => { console.error("FAIL: " + msg); process.exit(1); };
const check = (ok, msg) => { if (!ok) fail(msg); };

const openai = new OpenAI({ baseURL: base + "/v1", apiKey: "test-key", maxRetries: 0 });
const prompt = "0123456789".repeat(15);

// Responses, streamed: events in order, a reasoning item, text, usage.
{
  const stream = await openai.responses.create({ model: "fake-model", input: prompt, stream: true },
    { headers: { "X-Request-ID": "node-resp" } });
  const types = [];
  let text = "", final = null;
  for await (const ev of stream) {
    types.push(ev.type);
    if (ev.type === "response.output_text.delta") text += ev.delta;
    if (ev.type === "response.completed") final = ev.response;
  }
  check(types[0] === "response.created", "responses: first event " + types[0]);
  check(final && final.status === "completed", "responses: no response.completed");
  check(text.length > 0 && final.output.at(-1).content[0].text === text, "responses: final text differs from the deltas");
  check(final.output[0].type === "reasoning", "responses: no reasoning item");
  check(final.usage.output_tokens_details.reasoning_tokens === 3, "responses: reasoning_tokens " + JSON.stringify(final.usage));
}

// Responses, not streamed: the prompt's blocks are cached now.
{
  const r = await openai.responses.create({ model: "fake-model", input: prompt }, { headers: { "X-Request-ID": "node-resp" } });
  check(r.status === "completed" && r.output_text.length > 0, "responses: answer " + JSON.stringify(r));
  check(r.usage.input_tokens_details.cached_tokens === 32, "responses: cached_tokens " + JSON.stringify(r.usage));
}

// Responses, a tool call.
{
  const tools = new OpenAI({ baseURL: process.env.TOOL_BASE_URL + "/v1", apiKey: "test-key", maxRetries: 0 });
  const r = await tools.responses.create({ model: "fake-model", input: prompt,
    tools: [{ type: "function", name: "search", parameters: { type: "object", properties: {} } }] },
    { headers: { "X-Request-ID": "node-tool" } });
  const call = r.output.find((o) => o.type === "function_call");
  check(call && call.name === "search" && typeof JSON.parse(call.arguments) === "object", "responses: tool call " + JSON.stringify(r.output));
}

const anthropic = new Anthropic({ baseURL: base, apiKey: "test-key", maxRetries: 2 });
const params = { model: "fake-model", max_tokens: 64, messages: [{ role: "user", content: prompt }] };

// Messages, streamed: thinking then text, end_turn.
{
  const stream = anthropic.messages.stream(params, { headers: { "X-Request-ID": "node-msg" } });
  let deltas = 0;
  stream.on("text", () => { deltas++; });
  const m = await stream.finalMessage();
  check(m.content[0].type === "thinking" && m.content[1].type === "text", "messages: content " + JSON.stringify(m.content));
  check(m.stop_reason === "end_turn" && deltas === 8, `messages: stop ${m.stop_reason}, ${deltas} text deltas`);
}

// Messages, not streamed: cache_read_input_tokens.
{
  const m = await anthropic.messages.create(params, { headers: { "X-Request-ID": "node-msg" } });
  check(m.usage.cache_read_input_tokens === 32, "messages: usage " + JSON.stringify(m.usage));
}

// Messages: a 529 on the first attempt only, retried to success.
{
  const m = await anthropic.messages.create(params, { headers: { "X-Request-ID": "node-529" } });
  check(m.stop_reason === "end_turn", "messages: 529 retry gave " + JSON.stringify(m));
}

// Messages: a 529 on every attempt reaches the caller.
try {
  await anthropic.messages.create(params, { headers: { "X-Request-ID": "node-529-always" }, maxRetries: 0 });
  fail("messages: a 529 did not throw");
} catch (e) {
  check(e.status === 529 && JSON.stringify(e.error).includes("overloaded_error"), "messages: 529 error " + e);
}
console.log("ok");
