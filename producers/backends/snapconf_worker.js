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
// - anything your code writes with `console.log` (or `console.info`) goes to stderr, never
//   into the protocol stream.
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
 */
function serve(ops, { input = process.stdin, output = process.stdout } = {}) {
  // What the backend's code prints must not reach the protocol stream.
  const toStderr = (...args) => process.stderr.write(require("util").format(...args) + "\n");
  console.log = toStderr;
  console.info = toStderr;
  const lines = readline.createInterface({ input, crlfDelay: Infinity });
  let queue = Promise.resolve();
  lines.on("line", (line) => {
    if (!line.trim()) return;
    queue = queue.then(async () => {
      let reply;
      try {
        reply = await answer(JSON.parse(line), ops);
      } catch (error) {
        // A refusal is an answer, never the worker's end.
        const name = (error && error.name) || "Error";
        const message = error && error.message !== undefined ? error.message : String(error);
        process.stderr.write(`snapconf_worker: request refused:\n${(error && error.stack) || message}\n`);
        reply = { ok: false, error: `${name}: ${message}` };
      }
      output.write(JSON.stringify(reply) + "\n");
    });
  });
  return new Promise((resolve) => lines.on("close", () => queue.then(resolve)));
}

module.exports = { serve, decodePath };
