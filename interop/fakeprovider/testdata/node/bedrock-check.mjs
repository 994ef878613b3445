// Drives a fake provider with @aws-sdk/client-bedrock-runtime, unchanged:
// ConverseStream with tools and reasoning (its event stream parsed and
// CRC-checked by the SDK), a throttled request (ThrottlingException) and
// a stream that fails midway (ModelStreamErrorException). Run by
// TestNodeBedrockSDK with BASE_URL set to a fakeprovider server whose
// requests 0 and 1 answer text, 2 a 429 and 3 an error event, and
// TOOL_BASE_URL to one that answers tool calls; prints one JSON line per
// call and exits non-zero with a message on the first failure.
import { BedrockRuntimeClient, ConverseStreamCommand } from "@aws-sdk/client-bedrock-runtime";
import { NodeHttpHandler } from "@smithy/node-http-handler";

const fail = (msg) => { console.error("FAIL: " + msg); process.exit(1); };
const check = (ok, msg) => { if (!ok) fail(msg); };

const clientOf = (endpoint) => new BedrockRuntimeClient({
  region: "us-east-1",
  endpoint,
  credentials: { accessKeyId: "AKIAIOSFODNN7NODEJSX", secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYNODEJSKEY" },
  maxAttempts: 1,
  // HTTP/1.1, as the fake speaks it (the SDK's default handler for
  // Bedrock is HTTP/2's, which AWS's endpoints also speak).
  requestHandler: new NodeHttpHandler(),
});
const client = clientOf(process.env.BASE_URL), toolClient = clientOf(process.env.TOOL_BASE_URL);
const schema = { json: { type: "object", properties: { query: { type: "string" } } } };
const input = {
  modelId: process.env.MODEL_ID,
  messages: [{ role: "user", content: [{ text: "How long is the tail?" }] }],
  inferenceConfig: { maxTokens: 100 },
  toolConfig: { tools: [{ toolSpec: { name: "search", inputSchema: schema } }, { toolSpec: { name: "lookup", inputSchema: schema } }] },
  additionalModelRequestFields: { thinking: { type: "enabled", budget_tokens: 1024 } },
};

// converse streams one answer and returns what the SDK handed over.
async function converse(name, c = client) {
  const r = { call: name, text: "", reasoning: "", tools: [], stop: "", usage: null, latencyMs: -1, error: "" };
  const inputs = {};
  try {
    const out = await c.send(new ConverseStreamCommand(input));
    for await (const ev of out.stream) {
      if (ev.contentBlockStart?.start?.toolUse) {
        r.tools.push({ name: ev.contentBlockStart.start.toolUse.name, index: ev.contentBlockStart.contentBlockIndex });
        inputs[ev.contentBlockStart.contentBlockIndex] = "";
      }
      const d = ev.contentBlockDelta?.delta;
      if (d?.text) r.text += d.text;
      if (d?.reasoningContent?.text) r.reasoning += d.reasoningContent.text;
      if (d?.toolUse) inputs[ev.contentBlockDelta.contentBlockIndex] += d.toolUse.input;
      if (ev.messageStop) r.stop = ev.messageStop.stopReason;
      if (ev.metadata) { r.usage = ev.metadata.usage; r.latencyMs = ev.metadata.metrics?.latencyMs ?? -1; }
    }
  } catch (e) {
    r.error = e.name;
  }
  for (const t of r.tools) { t.input = JSON.parse(inputs[t.index]); delete t.index; }
  console.log(JSON.stringify(r));
  return r;
}

const text = await converse("text");
check(text.error === "" && text.text.length > 0 && text.reasoning.length > 0, "text: " + JSON.stringify(text));
check(text.stop === "end_turn" && text.usage.outputTokens === 11 && text.latencyMs >= 0, "text: stop, usage: " + JSON.stringify(text));
await converse("again");
const tools = await converse("tools", toolClient);
check(tools.error === "" && tools.stop === "tool_use" && tools.tools.length === 2, "tools: " + JSON.stringify(tools));
check(tools.tools[0].name === "search" && tools.tools[1].name === "lookup", "tools: names " + JSON.stringify(tools.tools));
const throttled = await converse("throttled");
check(throttled.error === "ThrottlingException", "throttled: " + throttled.error);
const broken = await converse("broken");
check(broken.error === "ModelStreamErrorException", "broken: " + broken.error);
