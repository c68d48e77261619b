// Drives memos over MCP with the official TypeScript SDK, as an agent would:
//   node client.mjs stdio <memos binary>     (memos mcp, with the caller's environment)
//   node client.mjs http <url> [token]       (memos serve's /mcp)
// It checks the tool list (names, schemas), stores a memory with
// memory_store, recalls it with memos_context_pack and checks the citation,
// checks errors, the bootstrap prompt and resource, and prints a JSON report.
// Exit status 0 means every check passed.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, target, token] = process.argv.slice(2);
const fail = (msg) => { throw new Error(msg); };
const check = (cond, msg) => { if (!cond) fail(msg); };

let transport;
if (mode === "stdio") {
  transport = new StdioClientTransport({ command: target, args: ["mcp"], env: { ...process.env }, stderr: "inherit" });
} else if (mode === "http") {
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  transport = new StreamableHTTPClientTransport(new URL(target), { requestInit: { headers } });
} else {
  fail(`usage: client.mjs stdio <memos> | http <url> [token]`);
}

const client = new Client({ name: "memos-test-client", version: "1.0.0" });
const report = { mode };
try {
  await client.connect(transport);
  report.server = client.getServerVersion();
  report.instructions = client.getInstructions() ?? "";
  check(report.instructions.includes("memory_store"), "server instructions do not mention memory_store");

  const { tools } = await client.listTools();
  report.tools = tools.map((t) => t.name);
  for (const name of ["memory_store", "memos_context_pack", "memos_set_validity", "memos_review", "memos_quarantine_release", "memos_search", "memos_forget", "memos_get", "memos_supersede"]) {
    check(report.tools.includes(name), `tool ${name} is missing (got ${report.tools.join(", ")})`);
  }
  for (const t of tools) {
    check(t.description && t.description.length > 40, `tool ${t.name} has no useful description`);
    check(t.inputSchema?.type === "object", `tool ${t.name}: input schema is not an object`);
    check(t.outputSchema?.type === "object", `tool ${t.name}: no object output schema`);
  }
  const store = tools.find((t) => t.name === "memory_store");
  check(store.inputSchema.required?.includes("content"), "memory_store does not require content");
  check(store.inputSchema.properties?.significance?.maximum === 10, "memory_store's significance is not bounded by 10");
  check(store.inputSchema.additionalProperties === false, "memory_store accepts unknown fields");

  const content = `The user's cat is called Miso (${mode})`;
  const stored = await client.callTool({ name: "memory_store", arguments: { content, type: "fact", significance: 6, entities: ["Miso"], source: `mcp-test:${mode}` } });
  check(!stored.isError, `memory_store failed: ${JSON.stringify(stored.content)}`);
  const id = stored.structuredContent?.id;
  check(Number.isInteger(id) && id > 0, `memory_store returned no id: ${JSON.stringify(stored.structuredContent)}`);
  report.stored = { id, version: stored.structuredContent.version, namespace: stored.structuredContent.namespace };

  const pack = await client.callTool({ name: "memos_context_pack", arguments: { query: "what is the user's cat called", budget: 400 } });
  check(!pack.isError, `memos_context_pack failed: ${JSON.stringify(pack.content)}`);
  const cited = pack.structuredContent?.memories?.find((m) => m.id === id);
  check(cited, `the stored memory ${id} is not in the pack: ${JSON.stringify(pack.structuredContent)}`);
  check(cited.version === 1 && cited.content === content && cited.source === `mcp-test:${mode}`, `citation is wrong: ${JSON.stringify(cited)}`);
  const text = pack.content.map((c) => c.text ?? "").join("");
  check(text.includes(content) && text.includes(`#${id}`), `the pack's text does not cite memory ${id}: ${text}`);
  report.pack = { tokens: pack.structuredContent.tokens, budget: pack.structuredContent.budget, memories: pack.structuredContent.memories.map((m) => m.id) };

  const bad = await client.callTool({ name: "memory_store", arguments: { content: "   " } });
  check(bad.isError, "an empty memory was accepted");
  check(JSON.parse(bad.content[0].text).error.kind === "invalid", `empty content: ${bad.content[0].text}`);
  const unknown = await client.callTool({ name: "memos_get", arguments: { id: 999999 } });
  check(unknown.isError && JSON.parse(unknown.content[0].text).error.kind === "not_found", `unknown id: ${JSON.stringify(unknown.content)}`);
  let threw = false;
  try { await client.callTool({ name: "memos_no_such_tool", arguments: {} }); } catch { threw = true; }
  const unknownTool = threw ? "protocol error" : "tool error";
  report.unknownTool = unknownTool;

  const { prompts } = await client.listPrompts();
  check(prompts.some((p) => p.name === "bootstrap"), "no bootstrap prompt");
  const prompt = await client.getPrompt({ name: "bootstrap", arguments: { budget: "400" } });
  check(prompt.messages[0].content.text.includes(content), `bootstrap prompt lacks the memory: ${prompt.messages[0].content.text}`);
  const res = await client.readResource({ uri: "memos://bootstrap" });
  check(res.contents[0].text.includes(content), "bootstrap resource lacks the memory");

  report.ok = true;
  console.log(JSON.stringify(report));
  await client.close();
  process.exit(0);
} catch (err) {
  report.ok = false;
  report.error = String(err?.stack ?? err);
  console.log(JSON.stringify(report));
  try { await client.close(); } catch {}
  process.exit(1);
}
