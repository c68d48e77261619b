"""Checks that the package's sources are Python 3.9 syntax.

The machine's python3 may be newer; ast.parse with feature_version=(3, 9)
rejects newer syntax (match, except*, parenthesized context managers), and
the walk below rejects X | Y in annotations and TypedDict values, which 3.9
cannot evaluate. Run by TestClients.
"""

from __future__ import annotations

import ast
import pathlib
import sys

root = pathlib.Path(__file__).resolve().parent.parent
problems = []
for path in sorted(root.rglob("*.py")):
    src = path.read_text(encoding="utf-8")
    try:
        tree = ast.parse(src, filename=str(path), feature_version=(3, 9))
    except SyntaxError as e:
        problems.append("%s:%s: not Python 3.9: %s" % (path, e.lineno, e.msg))
        continue
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            seg = ast.get_source_segment(src, node) or ""
            if any(t in seg for t in ("None", "str", "int", "float", "bool", "List", "Dict")):
                problems.append("%s:%d: X | Y types need Python 3.10: %s" % (path, node.lineno, seg))
if problems:
    print("\n".join(problems))
    sys.exit(1)
print("ok")
