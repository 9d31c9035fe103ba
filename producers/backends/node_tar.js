// node-tar as a snapconf worker backend (node-tar.toml): `tar.x` into the root, the way a
// sandbox would restore a workspace. The package is `require`d from SNAPCONF_NODE_TAR (a
// directory holding node-tar, as install_node_tar.sh prints it), else from Node's own search
// path (`npm install tar` beside this file, or NODE_PATH).
const fs = require("fs");
const path = require("path");
const { serve } = require("./snapconf_worker.js");
const pkg = process.env.SNAPCONF_NODE_TAR || "tar";
const tar = require(pkg);

async function capture(root, archive, exclude) {
  const skip = (p) => exclude.some((e) => p === e || p.startsWith(e + "/"));
  await tar.c({ file: archive, cwd: root, portable: true, filter: (p) => !skip(p.replace(/^\.\//, "")) }, ["."]);
}

async function hydrate(root, archive) {
  for (const name of fs.readdirSync(root)) fs.rmSync(path.join(root, name), { recursive: true, force: true });
  await tar.x({ file: archive, cwd: root });
}

// Coverage (when snapconf asks for it): node-tar's own files.
serve({ capture, hydrate }, { coverage: [path.dirname(require.resolve(pkg + "/package.json"))] });
