// Type-checked by `npm run typecheck` (TestTypeScriptTypes), never run: the
// declarations reject what the API rejects.
import { MemosClient, NotFoundError, type Memory, type ErrorKind } from "../index.js";

export async function typed(c: MemosClient): Promise<void> {
  const m: Memory = await c.remember({ content: "x", significance: 5, type: "fact" });
  m.id.toFixed();
  // @ts-expect-error content is required
  await c.remember({ significance: 5 });
  // @ts-expect-error unknown field
  await c.remember({ content: "x", contnt: "y" });
  // @ts-expect-error not a memory type
  await c.remember({ content: "x", type: "gossip" });
  // @ts-expect-error id is a number
  await c.get({ id: "1" });
  await c.stats(); // a request without required fields may be left out
  // @ts-expect-error get needs its request
  await c.get();
  const kind: ErrorKind = "not_found";
  const e = new NotFoundError("gone", { kind, status: 404 });
  const k: "not_found" = e.kind;
  void k;
}
