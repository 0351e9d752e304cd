// Sends one scrap with the extension's own core.js, as its background script does (Node's fetch and WebCrypto in
// the browser's place), to whatever listens on 127.0.0.1 ports 41730–41739; prints what sendScrap resolved to.
//   node send_scrap.js EXTENSION_DIR TOKEN SCRAP_JSON [REMEMBERED_PORT]
"use strict";

const path = require("node:path");

async function main() {
  const [extension, token, scrapJson, remembered] = process.argv.slice(2);
  const core = require(path.resolve(extension, "core.js"));
  const result = await core.sendScrap({
    scrap: JSON.parse(scrapJson),
    token,
    lastPort: remembered ? Number(remembered) : null,
    fetchFn: (url, init) => fetch(url, init),
    cryptoImpl: crypto,
  });
  console.log(JSON.stringify(result));
}

main().catch((error) => {
  console.error(error.stack || String(error));
  process.exit(1);
});
