// The worker side of snapconf's backend protocol for Node.js, in one file (no dependencies):
// the twin of snapconf_worker.py. Write the two operations of your backend and hand them
// to `serve`:
//
//     const { serve } = require("./snapconf_worker.js");
//
//     async function capture(root, archive, exclude) { ... }  // exclude: root-relative, no trailing /
//     async function hydrate(root, archive) { ... }           // restore `archive` into `root`
//
//     serve({ capture, hydrate });
//
// and point a backend description at it (`mode = "worker"`, `worker = ["node",
// "{dir}/my_worker.js"]`; see README.md beside this file). `serve` reads one JSON request per
// line from stdin and answers each with one JSON line on stdout until stdin closes:
//
// - paths arrive as strings; a path whose bytes are not UTF-8 (`{"hex": ...}` on the wire)
//   arrives as a Buffer of its raw bytes, which every `fs` function takes as a path;
// - each operation also gets, as its last argument, the request's `scratch` directory (a
//   private empty directory for this request);
// - returning (or a returned promise resolving) is `{"ok": true}`; a throw or a rejection is
//   a refusal, `{"ok": false, "error": "Name: message"}`, logged with its stack on stderr, and
//   the worker goes on with the next request; requests are answered one at a time, in order;
// - an operation whose promise can no longer settle (nothing it could wait on is left in
//   the event loop: no file or network request, timer or child process) is answered at
//   once with `{"ok": false, "stalled": true, ...}`, which snapconf reads as a hang without
//   waiting for its timeout, and the worker goes on (Node 17 and later; before, such a
//   request waits for the timeout);
// - anything your code writes with `console.log` (or `console.info`) goes to stderr, never
//   into the protocol stream;
// - when snapconf asks for coverage (`SNAPCONF_COVERAGE=1` in the worker's environment, as
//   `snapconf fuzz --coverage` sets it), each answer also carries `"coverage"`: the blocks of
//   the extraction code that request ran, from V8's precise coverage (`node:inspector`), by
//   default of every file outside node's own; `serve(ops, { coverage: [dir, ...] })` keeps
//   those under the directories (or files) named, e.g. the extractor's package.
"use strict";

const readline = require("readline");

/** A protocol path: a JSON string as it is, `{"hex": "..."}` as a Buffer of its bytes. */
function decodePath(value) {
  if (typeof value === "string") return value;
  if (value && typeof value === "object" && typeof value.hex === "string") {
    return Buffer.from(value.hex, "hex");
  }
  throw new TypeError(`not a path: ${JSON.stringify(value)}`);
}

/** FNV-1a of a string: a 32-bit id. */
function fnv1a(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/**
 * V8 block coverage of the scripts under `roots` (paths; every `file:` script but this one
 * when empty), taken per request: `take()` returns the ids of what ran since the last take
 * as one string of 8 hex digits per id, sorted. An id is a range V8 reports for a function
 * that ran (`Profiler.takePreciseCoverage` in block count mode, whose counts restart at each
 * take; binary mode reports a function only the first time it runs): the function itself,
 * or a block of it, with whether that block ran; so a new function, or a branch taken or
 * skipped for the first time, is a new id.
 */
function coverage(roots) {
  const inspector = require("node:inspector");
  const { fileURLToPath } = require("node:url");
  const path = require("node:path");
  const session = new inspector.Session();
  session.connect();
  const post = (method, params) =>
    new Promise((resolve, reject) =>
      session.post(method, params || {}, (error, result) => (error ? reject(error) : resolve(result))),
    );
  const prefixes = roots.map((r) => path.resolve(String(r)));
  const keep = (url) => {
    if (!url.startsWith("file:")) return false;
    const file = fileURLToPath(url);
    if (prefixes.length === 0) return file !== __filename;
    return prefixes.some((p) => file === p || file.startsWith(p + path.sep));
  };
  const take = async () => {
    const { result } = await post("Profiler.takePreciseCoverage");
    const ids = new Set();
    for (const script of result) {
      if (!keep(script.url)) continue;
      const name = path.basename(fileURLToPath(script.url));
      for (const fn of script.functions) {
        if (!fn.ranges.length || fn.ranges[0].count === 0) continue;
        for (const r of fn.ranges) {
          ids.add(fnv1a(`${name}:${r.startOffset}:${r.endOffset}:${r.count > 0 ? 1 : 0}`));
        }
      }
    }
    return [...ids]
      .sort((a, b) => a - b)
      .map((i) => i.toString(16).padStart(8, "0"))
      .join("");
  };
  const started = post("Profiler.enable")
    .then(() => post("Profiler.startPreciseCoverage", { callCount: true, detailed: true }))
    .then(take) // what loading the modules ran is not a request's
    .catch((e) => process.stderr.write(`snapconf_worker: no coverage: ${e}\n`));
  return { started, take };
}

/** Milliseconds between two looks at the event loop while a request runs ([`stallWatch`]). */
const STALL_POLL_MS = 5;
/**
 * How long the loop must stay idle before a request is called stalled. Measured with
 * node-tar 7 on 560 attack archives in one worker: idle for two looks 5 ms apart called 4 to
 * 10 of the 419 that settle stalled (something it waits on is briefly not listed); 20, 30
 * and 50 ms called none, and all 142 that never settle.
 */
const STALL_QUIET_MS = 50;

/** The names of `process.getActiveResourcesInfo()` as counts by name. */
function countNames(names) {
  const counts = new Map();
  for (const n of names) counts.set(n, (counts.get(n) || 0) + 1);
  return counts;
}

/**
 * Watches one request for a stall: an operation whose promise can no longer settle because
 * nothing it could wait on is left in the event loop (node-tar 7 on some archives: the
 * `tar.x` promise neither resolves nor rejects, and a script that awaits it ends with status
 * 0 as if it had finished). `idle` is `process.getActiveResourcesInfo()` as the request
 * started (the protocol's own pipes). Every `STALL_POLL_MS` the loop is looked at from a
 * timer, so pending callbacks and promise jobs have run; when for `STALL_QUIET_MS` it holds
 * nothing but `idle` and that timer (no file or network request, no other timer, immediate,
 * child process or stream handle), the watch's promise resolves. Without
 * `getActiveResourcesInfo` (Node before 17) it never resolves: the request waits as before.
 */
function stallWatch(idle) {
  if (typeof process.getActiveResourcesInfo !== "function") {
    return { stalled: new Promise(() => {}), stop() {} };
  }
  const before = countNames(idle);
  let timer = null;
  const stalled = new Promise((resolve) => {
    let quietSince = null;
    timer = setInterval(() => {
      const now = countNames(process.getActiveResourcesInfo());
      // This watch's own interval.
      now.set("Timeout", (now.get("Timeout") || 0) - 1);
      const busy = [...now].some(([name, n]) => n > (before.get(name) || 0));
      if (busy) {
        quietSince = null;
      } else if (quietSince === null) {
        quietSince = Date.now();
      } else if (Date.now() - quietSince >= STALL_QUIET_MS) {
        resolve();
      }
    }, STALL_POLL_MS);
  });
  return { stalled, stop: () => clearInterval(timer) };
}

/** The answer to one request (an object). */
async function answer(request, ops) {
  const op = request.op;
  const scratch = "scratch" in request ? decodePath(request.scratch) : undefined;
  const root = decodePath(request.root);
  const archive = decodePath(request.archive);
  if (op === "capture") {
    if (!ops.capture) throw new Error("this worker has no capture");
    const exclude = (request.exclude || []).map(decodePath);
    await ops.capture(root, archive, exclude, scratch);
  } else if (op === "hydrate") {
    if (!ops.hydrate) throw new Error("this worker has no hydrate");
    await ops.hydrate(root, archive, scratch);
  } else {
    throw new Error(`unknown op ${JSON.stringify(op)}`);
  }
  return { ok: true };
}

/**
 * Serve snapconf's requests until stdin closes. `capture(root, archive, exclude, scratch)`
 * and `hydrate(root, archive, scratch)` may be plain or `async` functions; a backend used
 * only as a producer (or an extractor) may leave the other out, and a request for it is
 * refused. `input`/`output` default to the process's stdin and stdout (tests pass others).
 * `coverage`: the directories or files whose blocks an answer reports when snapconf asks
 * for coverage (`SNAPCONF_COVERAGE=1`; default: every file outside node's own).
 */
function serve(ops, { input = process.stdin, output = process.stdout, coverage: roots = [] } = {}) {
  // What the backend's code prints must not reach the protocol stream.
  const toStderr = (...args) => process.stderr.write(require("util").format(...args) + "\n");
  console.log = toStderr;
  console.info = toStderr;
  const lines = readline.createInterface({ input, crlfDelay: Infinity });
  const tracer = process.env.SNAPCONF_COVERAGE === "1" ? coverage(roots) : null;
  let queue = tracer ? tracer.started : Promise.resolve();
  lines.on("line", (line) => {
    if (!line.trim()) return;
    queue = queue.then(async () => {
      let reply;
      const watch = stallWatch(process.getActiveResourcesInfo ? process.getActiveResourcesInfo() : []);
      try {
        const request = JSON.parse(line);
        reply = await Promise.race([
          answer(request, ops),
          watch.stalled.then(() => ({
            ok: false,
            stalled: true,
            error: `Stalled: the ${request.op} operation's promise can no longer settle: nothing it could wait on is left in the event loop`,
          })),
        ]);
        if (reply.stalled) process.stderr.write(`snapconf_worker: ${reply.error}\n`);
      } catch (error) {
        // A refusal is an answer, never the worker's end.
        const name = (error && error.name) || "Error";
        const message = error && error.message !== undefined ? error.message : String(error);
        process.stderr.write(`snapconf_worker: request refused:\n${(error && error.stack) || message}\n`);
        reply = { ok: false, error: `${name}: ${message}` };
      }
      watch.stop();
      if (tracer) {
        try {
          reply.coverage = await tracer.take();
        } catch (e) {
          process.stderr.write(`snapconf_worker: no coverage: ${e}\n`);
        }
      }
      output.write(JSON.stringify(reply) + "\n");
    });
  });
  return new Promise((resolve) => lines.on("close", () => queue.then(resolve)));
}

module.exports = { serve, decodePath };
