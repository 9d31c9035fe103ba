#!/usr/bin/env python3
"""The worker side of snapconf's backend protocol, in one file (standard library only).

Write the two operations of your backend and hand them to `serve`:

    import snapconf_worker

    def capture(root, archive, exclude):      # exclude: root-relative paths, no trailing /
        ...                                   # write the snapshot of `root` to `archive`

    async def hydrate(root, archive):         # sync or async, either one
        ...                                   # restore `archive` into `root`

    snapconf_worker.serve(capture=capture, hydrate=hydrate)

and point a backend description at it (`mode = "worker"`, `worker = ["python3",
"{dir}/my_worker.py"]`; see README.md beside this file). `serve` reads one JSON request per
line from stdin and answers each with one JSON line on stdout until stdin closes:

- paths arrive as `str`; bytes that are not UTF-8 (`{"hex": ...}` on the wire) are decoded
  with `os.fsdecode`, so they reach your code as the same surrogate-escaped `str` that
  `os.listdir` returns;
- an operation may also take a `scratch` parameter (a private empty directory on the root's
  filesystem for this request); it is passed only if the function names it;
- returning (or an awaited coroutine finishing) is `{"ok": true}`; any exception is a
  refusal, `{"ok": false, "error": "ExceptionType: text"}`, logged with its traceback on
  stderr, and the worker goes on with the next request;
- anything your code prints goes to stderr, never into the protocol stream.
"""

import asyncio
import inspect
import json
import logging
import os
import sys
import traceback

__all__ = ["serve", "decode_path"]

log = logging.getLogger("snapconf_worker")


def decode_path(value):
    """A protocol path as `str`: a JSON string as it is, `{"hex": "..."}` decoded from its
    raw bytes with `os.fsdecode`."""
    if isinstance(value, dict):
        return os.fsdecode(bytes.fromhex(value["hex"]))
    if isinstance(value, str):
        return value
    raise ValueError(f"not a path: {value!r}")


def _call(function, arguments, scratch):
    """Call `function` with `arguments` (and `scratch=` if it takes one); run it to the end
    if it is a coroutine function."""
    try:
        takes_scratch = "scratch" in inspect.signature(function).parameters
    except (TypeError, ValueError):
        takes_scratch = False
    kwargs = {"scratch": scratch} if takes_scratch else {}
    result = function(*arguments, **kwargs)
    if inspect.isawaitable(result):
        result = asyncio.run(_await(result))
    return result


async def _await(awaitable):
    return await awaitable


def _answer(request, capture, hydrate):
    """The answer to one request (a dict)."""
    op = request.get("op")
    scratch = decode_path(request["scratch"]) if "scratch" in request else None
    root = decode_path(request["root"])
    archive = decode_path(request["archive"])
    if op == "capture":
        if capture is None:
            raise ValueError("this worker has no capture")
        exclude = [decode_path(x) for x in request.get("exclude", [])]
        _call(capture, (root, archive, exclude), scratch)
    elif op == "hydrate":
        if hydrate is None:
            raise ValueError("this worker has no hydrate")
        _call(hydrate, (root, archive), scratch)
    else:
        raise ValueError(f"unknown op {op!r}")
    return {"ok": True}


def serve(capture=None, hydrate=None, *, stdin=None, stdout=None):
    """Serve snapconf's requests until stdin closes. `capture(root, archive, exclude)` and
    `hydrate(root, archive)` may be plain or `async` functions; a backend used only as a
    producer (or an extractor) may leave the other out, and a request for it is refused.
    `stdin`/`stdout` default to the process's own (tests pass others)."""
    stdin = stdin if stdin is not None else sys.stdin
    protocol = stdout if stdout is not None else sys.stdout
    if not logging.getLogger().handlers:
        logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(name)s: %(message)s")
    # What the backend's code prints must not reach the protocol stream.
    real_stdout, sys.stdout = sys.stdout, sys.stderr
    try:
        for line in stdin:
            if not line.strip():
                continue
            try:
                answer = _answer(json.loads(line), capture, hydrate)
            except Exception as error:  # a refusal is an answer, never the worker's end
                log.error("request refused:\n%s", traceback.format_exc().rstrip())
                answer = {"ok": False, "error": f"{type(error).__name__}: {error}"}
            protocol.write(json.dumps(answer) + "\n")
            protocol.flush()
    finally:
        sys.stdout = real_stdout
