// Drives a fake provider's Gemini API with Google's official Node SDK,
// @google/genai, unchanged: generateContentStream and generateContent,
// with thought summaries, parallel function calls and a 429. Run by
// TestNodeGeminiSDK with BASE_URL set to a fakeprovider server (no
// trailing path) and TOOL_BASE_URL to one whose answers are all tool
// calls; prints one JSON line per call for the test to check against
// what the fake served.
import { GoogleGenAI } from "@google/genai";

const client = (base) => new GoogleGenAI({ apiKey: "test-key", httpOptions: { baseUrl: base, apiVersion: "v1beta" } });
const config = (id, extra) => ({ thinkingConfig: { includeThoughts: true },
  httpOptions: { headers: { "X-Request-ID": id } }, ...extra });
const tools = { tools: [{ functionDeclarations: [
  { name: "get_weather", parameters: { type: "OBJECT", properties: { query: { type: "STRING" } } } },
  { name: "get_time", parameters: { type: "OBJECT", properties: { query: { type: "STRING" } } } }] }] };

// read collects what an application sees of the answer's chunks.
const read = (call, chunks) => {
  const out = { call, text: "", thoughts: "", finish: "", names: [], usage: {} };
  for (const ch of chunks) {
    const cand = (ch.candidates || [])[0];
    if (cand && cand.finishReason) out.finish = cand.finishReason;
    for (const p of (cand && cand.content && cand.content.parts) || []) {
      if (p.functionCall) out.names.push(p.functionCall.name);
      else if (p.thought) out.thoughts += p.text || "";
      else out.text += p.text || "";
    }
    if (ch.usageMetadata) {
      const u = ch.usageMetadata;
      out.usage = { prompt: u.promptTokenCount || 0, candidates: u.candidatesTokenCount || 0, thoughts: u.thoughtsTokenCount || 0 };
    }
  }
  return out;
};

const say = (o) => console.log(JSON.stringify(o));
const ai = client(process.env.BASE_URL);
const aiTools = client(process.env.TOOL_BASE_URL);
const contents = "hello there";

{
  const stream = await ai.models.generateContentStream({ model: "fake-model", contents, config: config("node-gemini-stream") });
  const chunks = [];
  for await (const ch of stream) chunks.push(ch);
  say(read("stream", chunks));
}
say(read("whole", [await ai.models.generateContent({ model: "fake-model", contents, config: config("node-gemini-whole") })]));
{
  const stream = await aiTools.models.generateContentStream({ model: "fake-model", contents, config: config("node-gemini-tools", tools) });
  const chunks = [];
  for await (const ch of stream) chunks.push(ch);
  say(read("stream-tools", chunks));
}
say(read("whole-tools", [await aiTools.models.generateContent({ model: "fake-model", contents, config: config("node-gemini-tools-whole", tools) })]));
try {
  await ai.models.generateContent({ model: "fake-model", contents, config: config("node-gemini-429") });
  say({ call: "429", error: "none" });
} catch (e) {
  say({ call: "429", status: e.status, error: String(e.message) });
}
