// @ts-check
// Drives a real memos server with the client: every operation at least
// once, checking the answers, and the errors a client meets (not_found,
// invalid, forbidden, unauthorized, unreachable, timeout). Run by
// TestClients (api/clients) with MEMOS_URL, MEMOS_ADMIN_TOKEN,
// MEMOS_SCOPED_TOKEN (limited to MEMOS_SCOPED_NAMESPACE) and
// MEMOS_TEST_NAMESPACE set. Prints {"ok":true,"called":[...]} on success.

import assert from "node:assert/strict";
import net from "node:net";
import {
  MemosClient,
  MemosError,
  NotFoundError,
  InvalidError,
  ForbiddenError,
  UnauthorizedError,
  UnavailableError,
  DeadlineExceededError,
  OPERATIONS,
} from "../index.js";

const env = (/** @type {string} */ name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run this through TestClients (go test ./api/clients/)`);
  return v;
};
const baseUrl = env("MEMOS_URL");
const ns = env("MEMOS_TEST_NAMESPACE");
const scopedNS = env("MEMOS_SCOPED_NAMESPACE");

/** @type {Set<string>} */
const called = new Set();

/** A client that records which operations it called. */
class Recording extends MemosClient {
  /** @type {MemosClient["call"]} */
  call(operation, request, options) {
    called.add(operation);
    return super.call(operation, request, options);
  }
}

const admin = new Recording({ baseUrl, token: env("MEMOS_ADMIN_TOKEN"), namespace: ns });
const scoped = new Recording({ baseUrl, token: env("MEMOS_SCOPED_TOKEN") });

/**
 * Runs fn and checks it fails with an error of class want, kind and status.
 * @param {() => Promise<unknown>} fn
 * @param {Function} want
 * @param {string} kind
 * @param {number} status
 */
async function fails(fn, want, kind, status) {
  try {
    await fn();
  } catch (err) {
    assert.ok(err instanceof want, `want a ${want.name}, got ${err}`);
    assert.ok(err instanceof MemosError);
    const e = /** @type {MemosError} */ (err);
    assert.equal(e.kind, kind, e.message);
    assert.equal(e.status, status, e.message);
    assert.ok(e.message.length > 0);
    assert.equal(e.requestId !== "", status > 0, "a server's answer carries its request id");
    return e;
  }
  assert.fail(`want a ${want.name}, the call succeeded`);
}

// The server is up.
const health = await admin.health();
assert.equal(health.status, "ok");

// Writes.
const m1 = await admin.remember({ content: "Alice prefers open-source tools", significance: 7, entities: ["Alice"], source: "conversation:1#turn-1", metadata: { lang: "en" } });
assert.ok(m1.id > 0);
assert.equal(m1.namespace, ns);
assert.equal(m1.significance, 7);
assert.deepEqual(m1.metadata, { lang: "en" });

const batch = await admin.rememberBatch({ memories: [
  { content: "Alice lives in Lisbon since 2023", source: "conversation:1#turn-2", type: "fact" },
  { content: "Bob keeps his notes in a plain text file", source: "file:notes.md" },
] });
assert.equal(batch.memories.length, 2);
const [lisbon, notes] = batch.memories;

const cap = await admin.capture({ session: "chat-2", no_extract: true, turns: [
  { speaker: "user", text: "We deploy the billing service on Fridays" },
  { speaker: "assistant", text: "Noted: billing deploys happen on Fridays" },
] });
assert.equal(cap.turns.length, 2);
assert.equal(cap.new_turns, 2);

// Reads.
const found = await admin.search({ query: "open-source tools", limit: 5 });
assert.ok(found.hits.some((h) => h.memory.id === m1.id), "search finds the memory");

const pack = await admin.contextPack({ query: "which tools does Alice prefer", budget: 400 });
assert.ok(pack.memories.some((it) => it.id === m1.id), "the pack cites the memory");
assert.ok(pack.tokens <= 400);

const expl = await admin.explain({ query: "Alice", mode: "keyword" });
assert.ok(expl.candidates.length > 0);

const got = await admin.get({ id: m1.id });
assert.equal(got.content, m1.content);

// Versions.
const upd = await admin.update({ id: m1.id, content: "Alice prefers open-source tools written in Go" });
assert.equal(upd.version, 2);
const hist = await admin.history({ id: m1.id });
assert.deepEqual(hist.versions.map((v) => v.version), [1, 2]);
const rev = await admin.revert({ id: m1.id, version: 1 });
assert.equal(rev.version, 3);
assert.equal(rev.content, m1.content);
assert.equal((await admin.get({ id: m1.id, version: 2 })).content, upd.content);

// Event time and supersede.
const valid = await admin.setValidity({ id: lisbon.id, valid_from: "2023-01-01" });
assert.ok(valid.valid_from?.startsWith("2023-01-01"), valid.valid_from);
const berlin = await admin.supersede({ id: lisbon.id, content: "Alice lives in Berlin since 2026", source: "conversation:3#turn-1" });
assert.notEqual(berlin.id, lisbon.id);
const trace = await admin.trace({ id: berlin.id });
assert.equal(trace.memory.id, berlin.id);
assert.ok(trace.derived_from.some((n) => n.id === lisbon.id), "trace reaches the superseded memory");

// Edges.
const edge = await admin.link({ from: m1.id, to: notes.id, type: "supports", weight: 0.5 });
assert.equal(edge.type, "supports");
assert.ok((await admin.edges({ id: m1.id })).edges.some((e) => e.to === notes.id && e.type === "supports"));
const un = await admin.unlink({ from: m1.id, to: notes.id, type: "supports" });
assert.equal(un.removed, true);
assert.ok(!(await admin.edges({ id: m1.id })).edges.some((e) => e.to === notes.id && e.type === "supports"));

// Browsing, page by page.
const seen = new Set();
let cursor;
do {
  const page = await admin.list({ limit: 2, namespace_only: true, cursor });
  for (const m of page.memories) seen.add(m.id);
  cursor = page.next_cursor;
} while (cursor);
for (const id of [m1.id, notes.id, berlin.id]) assert.ok(seen.has(id), `list pages include ${id}`);

// Lessons.
const lesson = await admin.learn({ guidance: "run the tests before pushing", when: "before a release" });
assert.ok((await admin.lessons()).lessons.some((l) => l.memory.id === lesson.memory.id));
const out = await admin.lessonOutcome({ id: lesson.memory.id, success: true, note: "caught a bug" });
assert.equal(out.successes, 1);
assert.equal((await admin.lesson({ id: lesson.memory.id })).successes, 1);

// The review queue.
const held = await admin.remember({ content: "Alice's badge number is 4471", quarantine: true });
const held2 = await admin.remember({ content: "Alice might be moving to Mars", quarantine: true });
assert.equal(held.status, "quarantined");
const queue = await admin.review();
assert.ok(queue.items.some((it) => it.memory.id === held.id));
const released = await admin.quarantineRelease({ id: held.id, trust: "certain", note: "checked with Alice" });
assert.equal(released.status, "active");
const rejected = await admin.quarantineReject({ id: held2.id, reason: "speculation" });
assert.equal(rejected.memory_id, held2.id);

// Forgetting.
const cert = await admin.forget({ id: notes.id, reason: "user asked" });
assert.equal(cert.memory_id, notes.id);
assert.match(cert.content_sha256, /^[0-9a-f]{64}$/);
await fails(() => admin.get({ id: notes.id }), NotFoundError, "not_found", 404);
const dry = await admin.forgetSource({ source: "session:chat-2", dry_run: true });
assert.equal(dry.matched.length, 2);
const gone = await admin.forgetSource({ source: "session:chat-2", reason: "test" });
assert.equal(gone.certificates.length, 2);

// Upkeep.
const cons = await admin.consolidate({ dry_run: true });
assert.equal(cons.dry_run, true);
const stats = await admin.stats();
assert.ok((stats.by_namespace[ns] ?? 0) > 0, JSON.stringify(stats.by_namespace));
const audit = await admin.auditVerify();
assert.ok(audit.entries > 0);
assert.equal(audit.broken ?? 0, 0);
const log = await admin.audit({ action: "remember" });
assert.ok(log.entries.length > 0 && log.entries.every((e) => e.action === "remember"), JSON.stringify(log.entries[0]));
const auditExport = await admin.auditExport();
assert.equal(auditExport.entries.length, audit.entries);

// The store as JSONL, and back: a dry run checks it and stores nothing.
const exported = await admin.export({ namespaces: [ns] });
assert.ok(exported.memories > 0 && exported.jsonl.split("\n").length > exported.memories, JSON.stringify(exported).slice(0, 200));
const checked = await admin.import({ jsonl: exported.jsonl, dry_run: true });
assert.equal(checked.dry_run, true);
assert.equal(checked.imported + checked.skipped, exported.memories);
await fails(() => admin.import({ jsonl: exported.jsonl.slice(0, exported.jsonl.length / 2) }), InvalidError, "invalid", 400);

// Errors, each with its class, kind and status.
await fails(() => admin.get({ id: 987654321 }), NotFoundError, "not_found", 404);
await fails(() => admin.remember({ content: "x", significance: 11 }), InvalidError, "invalid", 400);
await fails(() => admin.call("get", { id: m1.id, bogus: true }), InvalidError, "invalid", 400);
await fails(() => admin.call("no-such-operation", {}), NotFoundError, "not_found", 404);
// A token limited to one namespace: it writes there, cannot name another,
// cannot read the whole store, and does not see the other's memories.
const mine = await scoped.remember({ content: "scoped memory" });
assert.equal(mine.namespace, scopedNS);
await fails(() => scoped.get({ id: m1.id, namespace: ns }), ForbiddenError, "forbidden", 403);
await fails(() => scoped.auditVerify(), ForbiddenError, "forbidden", 403);
await fails(() => scoped.get({ id: m1.id }), NotFoundError, "not_found", 404);
await fails(() => new MemosClient({ baseUrl }).stats(), UnauthorizedError, "unauthorized", 401);
await fails(() => new MemosClient({ baseUrl, token: "not-a-token-of-this-server" }).stats(), UnauthorizedError, "unauthorized", 401);

// No answer: nothing listens, or a listener that never answers.
const closed = net.createServer();
await new Promise((resolve) => closed.listen(0, "127.0.0.1", () => resolve(undefined)));
const closedPort = /** @type {net.AddressInfo} */ (closed.address()).port;
await new Promise((resolve) => closed.close(() => resolve(undefined)));
await fails(() => new MemosClient({ baseUrl: `http://127.0.0.1:${closedPort}` }).stats(), UnavailableError, "unavailable", 0);
/** @type {net.Socket[]} */
const sockets = [];
const silent = net.createServer((s) => { sockets.push(s); });
await new Promise((resolve) => silent.listen(0, "127.0.0.1", () => resolve(undefined)));
const silentPort = /** @type {net.AddressInfo} */ (silent.address()).port;
await fails(() => new MemosClient({ baseUrl: `http://127.0.0.1:${silentPort}`, timeoutMs: 300 }).stats(), DeadlineExceededError, "deadline_exceeded", 0);
for (const s of sockets) s.destroy();
silent.close();

const missing = OPERATIONS.filter((o) => !called.has(o));
process.stdout.write(JSON.stringify({ ok: true, called: [...called].sort(), missing }) + "\n");
