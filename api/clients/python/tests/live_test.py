"""Drives a real memos server with the client.

Every operation at least once, checking the answers, and the errors a
client meets (not_found, invalid, forbidden, unauthorized, unreachable,
timeout). Run by TestClients (api/clients) with MEMOS_URL,
MEMOS_ADMIN_TOKEN, MEMOS_SCOPED_TOKEN (limited to MEMOS_SCOPED_NAMESPACE)
and MEMOS_TEST_NAMESPACE set. Prints {"ok": true, "called": [...]} on
success.
"""

from __future__ import annotations

import json
import os
import re
import socket
import sys
from typing import Any, Callable, List, Optional, Set, Type

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import memos_client as memos  # noqa: E402
from memos_client import (  # noqa: E402
    Client,
    DeadlineExceededError,
    ForbiddenError,
    InvalidError,
    MemosError,
    NotFoundError,
    UnauthorizedError,
    UnavailableError,
)


def env(name: str) -> str:
    v = os.environ.get(name)
    if not v:
        raise SystemExit("%s is not set: run this through TestClients (go test ./api/clients/)" % name)
    return v


BASE_URL = env("MEMOS_URL")
NS = env("MEMOS_TEST_NAMESPACE")
SCOPED_NS = env("MEMOS_SCOPED_NAMESPACE")

called: Set[str] = set()


class Recording(Client):
    """A client that records which operations it called."""

    def call(self, operation: str, body: Any = None) -> Any:
        called.add(operation)
        return super().call(operation, body)


admin = Recording(BASE_URL, token=env("MEMOS_ADMIN_TOKEN"), namespace=NS)
scoped = Recording(BASE_URL, token=env("MEMOS_SCOPED_TOKEN"))


def fails(fn: Callable[[], Any], want: Type[MemosError], kind: str, status: int) -> MemosError:
    """Runs fn and checks it raises want with kind and status."""
    try:
        fn()
    except MemosError as e:
        assert isinstance(e, want), "want a %s, got %r" % (want.__name__, e)
        assert e.kind == kind, (e.kind, str(e))
        assert e.status == status, (e.status, str(e))
        assert e.message
        assert (e.request_id != "") == (status > 0), "a server's answer carries its request id"
        return e
    raise AssertionError("want a %s, the call succeeded" % want.__name__)


def main() -> None:
    assert admin.health()["status"] == "ok"

    # Writes.
    m1 = admin.remember(
        "Alice prefers open-source tools",
        significance=7,
        entities=["Alice"],
        source="conversation:1#turn-1",
        metadata={"lang": "en"},
    )
    assert m1["id"] > 0 and m1["namespace"] == NS and m1["significance"] == 7, m1
    assert m1.get("metadata") == {"lang": "en"}, m1

    batch = admin.remember_batch(
        [
            {"content": "Alice lives in Lisbon since 2023", "source": "conversation:1#turn-2", "type": "fact"},
            {"content": "Bob keeps his notes in a plain text file", "source": "file:notes.md"},
        ]
    )
    lisbon, notes = batch["memories"]

    cap = admin.capture(
        "chat-2",
        [
            {"speaker": "user", "text": "We deploy the billing service on Fridays"},
            {"speaker": "assistant", "text": "Noted: billing deploys happen on Fridays"},
        ],
        no_extract=True,
    )
    assert len(cap["turns"]) == 2 and cap["new_turns"] == 2, cap

    # Reads.
    found = admin.search("open-source tools", limit=5)
    assert any(h["memory"]["id"] == m1["id"] for h in found["hits"]), found
    pack = admin.context_pack(query="which tools does Alice prefer", budget=400)
    assert any(it["id"] == m1["id"] for it in pack["memories"]), pack
    assert pack["tokens"] <= 400
    expl = admin.explain("Alice", mode="keyword")
    assert expl["candidates"], expl
    assert admin.get(m1["id"])["content"] == m1["content"]

    # Versions.
    upd = admin.update(m1["id"], content="Alice prefers open-source tools written in Go")
    assert upd["version"] == 2, upd
    assert [v["version"] for v in admin.history(m1["id"])["versions"]] == [1, 2]
    rev = admin.revert(m1["id"], 1)
    assert rev["version"] == 3 and rev["content"] == m1["content"], rev
    assert admin.get(m1["id"], version=2)["content"] == upd["content"]

    # Event time and supersede.
    valid = admin.set_validity(lisbon["id"], valid_from="2023-01-01")
    assert valid.get("valid_from", "").startswith("2023-01-01"), valid
    berlin = admin.supersede(lisbon["id"], "Alice lives in Berlin since 2026", source="conversation:3#turn-1")
    assert berlin["id"] != lisbon["id"]
    trace = admin.trace(berlin["id"])
    assert trace["memory"]["id"] == berlin["id"]
    assert any(n["id"] == lisbon["id"] for n in trace["derived_from"]), trace

    # Edges.
    edge = admin.link(m1["id"], notes["id"], type="supports", weight=0.5)
    assert edge["type"] == "supports", edge
    assert any(e["to"] == notes["id"] and e["type"] == "supports" for e in admin.edges(m1["id"])["edges"])
    assert admin.unlink(m1["id"], notes["id"], type="supports")["removed"] is True
    assert not any(e["to"] == notes["id"] and e["type"] == "supports" for e in admin.edges(m1["id"])["edges"])

    # Browsing, page by page.
    seen: Set[int] = set()
    cursor: Optional[str] = None
    while True:
        page = admin.list(limit=2, namespace_only=True, cursor=cursor)
        seen.update(m["id"] for m in page["memories"])
        cursor = page.get("next_cursor")
        if not cursor:
            break
    for mid in (m1["id"], notes["id"], berlin["id"]):
        assert mid in seen, (mid, seen)

    # Lessons.
    lesson = admin.learn("run the tests before pushing", when="before a release")
    assert any(x["memory"]["id"] == lesson["memory"]["id"] for x in admin.lessons()["lessons"])
    out = admin.lesson_outcome(lesson["memory"]["id"], True, note="caught a bug")
    assert out["successes"] == 1, out
    assert admin.lesson(lesson["memory"]["id"])["successes"] == 1

    # The review queue.
    held = admin.remember("Alice's badge number is 4471", quarantine=True)
    held2 = admin.remember("Alice might be moving to Mars", quarantine=True)
    assert held["status"] == "quarantined", held
    assert any(it["memory"]["id"] == held["id"] for it in admin.review()["items"])
    released = admin.quarantine_release(held["id"], trust="certain", note="checked with Alice")
    assert released["status"] == "active", released
    assert admin.quarantine_reject(held2["id"], reason="speculation")["memory_id"] == held2["id"]

    # Forgetting.
    cert = admin.forget(notes["id"], reason="user asked")
    assert cert["memory_id"] == notes["id"] and re.fullmatch("[0-9a-f]{64}", cert["content_sha256"]), cert
    fails(lambda: admin.get(notes["id"]), NotFoundError, "not_found", 404)
    dry = admin.forget_source("session:chat-2", dry_run=True)
    assert len(dry["matched"]) == 2, dry
    assert len(admin.forget_source("session:chat-2", reason="test")["certificates"]) == 2

    # Upkeep.
    assert admin.consolidate(dry_run=True).get("dry_run") is True
    stats = admin.stats()
    assert stats["by_namespace"].get(NS, 0) > 0, stats
    audit = admin.audit_verify()
    assert audit["entries"] > 0 and audit.get("broken", 0) == 0, audit
    log = admin.audit(action="remember")
    assert log["entries"] and all(e["action"] == "remember" for e in log["entries"]), log["entries"][:1]
    audit_export = admin.audit_export()
    assert len(audit_export["entries"]) == audit["entries"], audit_export["head"]

    # The store as JSONL, and back: a dry run checks it and stores nothing.
    exported = admin.export(namespaces=[NS])
    assert exported["memories"] > 0 and len(exported["jsonl"].split("\n")) > exported["memories"], exported["memories"]
    dry = admin.import_(jsonl=exported["jsonl"], dry_run=True)
    assert dry.get("dry_run") is True, dry
    assert dry["imported"] + dry["skipped"] == exported["memories"], dry
    half = exported["jsonl"][: len(exported["jsonl"]) // 2]
    fails(lambda: admin.import_(jsonl=half), InvalidError, "invalid", 400)

    # Errors, each with its class, kind and status.
    fails(lambda: admin.get(987654321), NotFoundError, "not_found", 404)
    fails(lambda: admin.remember("x", significance=11), InvalidError, "invalid", 400)
    fails(lambda: admin.call("get", {"id": m1["id"], "bogus": True}), InvalidError, "invalid", 400)
    fails(lambda: admin.call("no-such-operation", {}), NotFoundError, "not_found", 404)
    # A token limited to one namespace: it writes there, cannot name
    # another, cannot read the whole store, and does not see the other's
    # memories.
    assert scoped.remember("scoped memory")["namespace"] == SCOPED_NS
    fails(lambda: scoped.get(m1["id"], namespace=NS), ForbiddenError, "forbidden", 403)
    fails(lambda: scoped.audit_verify(), ForbiddenError, "forbidden", 403)
    fails(lambda: scoped.get(m1["id"]), NotFoundError, "not_found", 404)
    fails(lambda: Client(BASE_URL).stats(), UnauthorizedError, "unauthorized", 401)
    fails(lambda: Client(BASE_URL, token="not-a-token-of-this-server").stats(), UnauthorizedError, "unauthorized", 401)

    # No answer: nothing listens, or a listener that never answers.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed_port = s.getsockname()[1]
    fails(lambda: Client("http://127.0.0.1:%d" % closed_port).stats(), UnavailableError, "unavailable", 0)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        port = silent.getsockname()[1]
        slow = Client("http://127.0.0.1:%d" % port, timeout=0.3)
        fails(lambda: slow.stats(), DeadlineExceededError, "deadline_exceeded", 0)

    missing: List[str] = [o for o in memos.OPERATIONS if o not in called]
    print(json.dumps({"ok": True, "called": sorted(called), "missing": missing}))


if __name__ == "__main__":
    main()
