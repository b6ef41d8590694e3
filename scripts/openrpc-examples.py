#!/usr/bin/env python3
"""Records the OpenRPC examples of docs/openrpc.json from a real daemon: every call, made in the
scenes of scripts/openrpc_scenes.py (one room each, its actors, placeholders for peer ids, fresh
tokens, earlier results' ids and pushed tokens). test_contract.py plays the same scenes and checks
each real answer has the recorded shape. Rewrites every method's "examples".

    ROOMD_BIN=.build/debug/roomd .venv-test/bin/python scripts/openrpc-examples.py docs/openrpc.json
"""
import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from openrpc_scenes import play  # noqa: E402
from roomd import RoomdProcess  # noqa: E402


def main():
    path = sys.argv[1]
    document = json.load(open(path))
    order = [m["name"] for m in document["methods"] if not m.get("x-roomd-push")]
    examples = {}

    def record(method, name, actor, params, result, room):
        if name is not None and method not in examples:
            examples[method] = {"name": name, "params": [{"name": k, "value": v} for k, v in params.items()],
                                "result": {"name": "result", "value": result}, "x-roomd-caller": actor,
                                "x-roomd-scene": room}

    pushes = {m["name"] for m in document["methods"] if m.get("x-roomd-push")}

    def record_push(method, params, actor, room):
        # The first push of each kind an actor of the scenes got, as it arrived (a notification: no result).
        if method in pushes and method not in examples:
            examples[method] = {"name": f"as {actor} got it", "params": [{"name": k, "value": v} for k, v in (params or {}).items()],
                                "x-roomd-recipient": actor, "x-roomd-scene": room}

    with RoomdProcess() as roomd:
        asyncio.run(play(roomd, order, record, record_push))
    for method in document["methods"]:
        method.pop("examples", None)
        if method["name"] in examples:
            method["examples"] = [examples[method["name"]]]
    missing = [name for name in order if name not in examples]
    unseen = sorted(pushes - examples.keys())
    open(path, "w").write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    print(len(examples), "examples", f"(no example: {missing})" if missing else "",
          f"(pushes the scenes never saw: {unseen})" if unseen else "")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
