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
- anything your code prints goes to stderr, never into the protocol stream;
- when snapconf asks for coverage (`SNAPCONF_COVERAGE=1` in the worker's environment, as
  `snapconf fuzz --coverage` sets it), each answer also carries `"coverage"`: the lines of
  the extraction code that request ran ([`Coverage`]), by default those of the file that
  defines `hydrate` and of `tarfile`; `serve(coverage=[...])` names other modules or files.
"""

import asyncio
import inspect
import json
import logging
import os
import sys
import traceback
import zlib

__all__ = ["serve", "decode_path", "Coverage", "COVERAGE_VAR"]

COVERAGE_VAR = "SNAPCONF_COVERAGE"
"""The environment variable that asks a worker for coverage (`1`: on)."""

# sys.monitoring's tool id for coverage (3.12+); 1 is COVERAGE_ID, free in a worker.
_TOOL = 1

log = logging.getLogger("snapconf_worker")


def decode_path(value):
    """A protocol path as `str`: a JSON string as it is, `{"hex": "..."}` decoded from its
    raw bytes with `os.fsdecode`."""
    if isinstance(value, dict):
        return os.fsdecode(bytes.fromhex(value["hex"]))
    if isinstance(value, str):
        return value
    raise ValueError(f"not a path: {value!r}")


class Coverage:
    """Line coverage of some source files during a stretch of code, as a compact set of ids.

    `files` are modules, functions (their module) or paths (of modules imported by then).
    Between `start()` and `stop()`, every line of those files that runs is recorded once;
    `stop()` returns the ids as one string: 8 lower-case hex digits per id (a CRC-32 of
    `file-name:line`), sorted, so the same path through the code gives the same string.
    Python 3.12 and later use `sys.monitoring`: a LINE event on those files' code objects
    only, disabled at each line after its first hit and re-armed by `start()`; older ones
    `sys.settrace`, with a line tracer only in frames of those files. One thread: what runs
    on other threads is not counted."""

    def __init__(self, files):
        modules = [_module_of(f) for f in files]
        self.files = {m.__file__ for m in modules if getattr(m, "__file__", None)}
        self.lines = set()
        self.monitoring = getattr(sys, "monitoring", None)
        if self.monitoring is not None:
            events = self.monitoring.events
            self.monitoring.use_tool_id(_TOOL, "snapconf")
            self.monitoring.register_callback(_TOOL, events.LINE, self._line)
            for code in _code_objects(modules, self.files):
                self.monitoring.set_local_events(_TOOL, code, events.LINE)

    def _line(self, code, line):
        self.lines.add((code.co_filename, line))
        return self.monitoring.DISABLE

    def _call(self, frame, event, arg):
        return self._local if frame.f_code.co_filename in self.files else None

    def _local(self, frame, event, arg):
        if event == "line":
            self.lines.add((frame.f_code.co_filename, frame.f_lineno))
        return self._local

    def start(self):
        """Begin recording (anew)."""
        self.lines = set()
        if self.monitoring is not None:
            self.monitoring.restart_events()
        else:
            sys.settrace(self._call)

    def stop(self):
        """End recording; the ids of the lines that ran, as one hex string."""
        if self.monitoring is None:
            sys.settrace(None)
        lines, self.lines = self.lines, set()
        ids = sorted({zlib.crc32(f"{os.path.basename(f)}:{n}".encode()) for f, n in lines})
        return "".join("%08x" % i for i in ids)


def _module_of(thing):
    """The module `thing` is, defines (a function) or is the file of (a path)."""
    if isinstance(thing, str):
        path = os.path.abspath(thing)
        for module in list(sys.modules.values()):
            if getattr(module, "__file__", None) and os.path.abspath(module.__file__) == path:
                return module
        raise ValueError(f"no module imported from {thing!r}")
    if inspect.ismodule(thing):
        return thing
    return sys.modules[thing.__module__]


def _code_objects(modules, files):
    """Every code object of `modules` defined in `files`: their functions, the methods of
    their classes, and what those define inside them (closures, comprehensions)."""
    codes, seen = set(), set()

    def add(code):
        if code not in codes:
            codes.add(code)
            for const in code.co_consts:
                if inspect.iscode(const):
                    add(const)

    def visit(obj):
        if id(obj) in seen:
            return
        seen.add(id(obj))
        if inspect.isfunction(obj):
            if obj.__code__.co_filename in files:
                add(obj.__code__)
        elif isinstance(obj, (staticmethod, classmethod)):
            visit(obj.__func__)
        elif isinstance(obj, property):
            for f in (obj.fget, obj.fset, obj.fdel):
                visit(f)
        elif inspect.isclass(obj):
            for value in vars(obj).values():
                visit(value)

    for module in modules:
        for value in vars(module).values():
            visit(value)
    return codes


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


def serve(capture=None, hydrate=None, *, stdin=None, stdout=None, coverage=None):
    """Serve snapconf's requests until stdin closes. `capture(root, archive, exclude)` and
    `hydrate(root, archive)` may be plain or `async` functions; a backend used only as a
    producer (or an extractor) may leave the other out, and a request for it is refused.
    `stdin`/`stdout` default to the process's own (tests pass others). `coverage`: the
    modules, functions or files whose lines a hydrate request's answer reports when
    `SNAPCONF_COVERAGE=1` (default: `hydrate`'s file and `tarfile`)."""
    stdin = stdin if stdin is not None else sys.stdin
    protocol = stdout if stdout is not None else sys.stdout
    if not logging.getLogger().handlers:
        logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="%(name)s: %(message)s")
    # What the backend's code prints must not reach the protocol stream.
    real_stdout, sys.stdout = sys.stdout, sys.stderr
    tracer = None
    if os.environ.get(COVERAGE_VAR) == "1" and hydrate is not None:
        import tarfile

        tracer = Coverage(coverage if coverage is not None else [hydrate, tarfile])
    try:
        for line in stdin:
            if not line.strip():
                continue
            if tracer is not None:
                tracer.start()
            try:
                answer = _answer(json.loads(line), capture, hydrate)
            except Exception as error:  # a refusal is an answer, never the worker's end
                log.error("request refused:\n%s", traceback.format_exc().rstrip())
                answer = {"ok": False, "error": f"{type(error).__name__}: {error}"}
            if tracer is not None:
                answer["coverage"] = tracer.stop()
            protocol.write(json.dumps(answer) + "\n")
            protocol.flush()
    finally:
        sys.stdout = real_stdout
