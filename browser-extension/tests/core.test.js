// Node's test runner over core.js (node --test browser-extension/tests/): the port search, the requests and the
// badges, against a real HTTP server on 127.0.0.1 that answers as SAN Desktop's endpoint is specified to.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const http = require("node:http");
const path = require("node:path");

const core = require(path.join(__dirname, "..", "core.js"));

/**
 * A server on an ephemeral loopback port, and a fetch that sends what the extension addresses to one port of the
 * app's range there; every other port of the range refuses, as a closed port does.
 */
async function withServer(handler, appPort, body) {
  const server = http.createServer(handler);
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const real = server.address().port;
  const asked = [];
  const fetchFn = (url, init) => {
    const parsed = new URL(url);
    asked.push(Number(parsed.port));
    if (Number(parsed.port) !== appPort) return Promise.reject(new TypeError("fetch failed"));
    parsed.port = String(real);
    return fetch(parsed, init);
  };
  try {
    await body({ fetchFn, asked });
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

function readBody(request) {
  return new Promise((resolve) => {
    const chunks = [];
    request.on("data", (chunk) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
  });
}

function answer(response, status, body) {
  response.writeHead(status, { "Content-Type": "application/json" });
  response.end(JSON.stringify(body));
}

/** Answers as the app's endpoint: the token "secret", a scrap stored once per URL. */
function fakeApp(received) {
  const stored = new Set();
  return async (request, response) => {
    if (request.headers.authorization !== "Bearer secret") {
      return answer(response, 401, { error: "The token is missing or wrong." });
    }
    if (request.method === "GET" && request.url === "/v1/status") {
      return answer(response, 200, { app: "SAN Desktop", version: "1.2.3" });
    }
    if (request.method === "POST" && request.url === "/v1/scraps") {
      const scrap = JSON.parse(await readBody(request));
      received.push({ contentType: request.headers["content-type"], scrap });
      if (scrap.html && scrap.html.length > 1000) return answer(response, 413, { error: "The page is too large." });
      const duplicate = stored.has(scrap.url);
      stored.add(scrap.url);
      return answer(response, 200, { scrap_id: `s${stored.size}`, duplicate });
    }
    return answer(response, 404, { error: "No such endpoint." });
  };
}

/**
 * The app as withServer() has it on `appPort`, and another server answering with `handler` on `otherPort` of the
 * range (another program, or another SAN Desktop); `body` gets the fetch that reaches both and the ports asked.
 */
async function withAnother(app, appPort, handler, otherPort, body) {
  const other = http.createServer(handler);
  await new Promise((resolve) => other.listen(0, "127.0.0.1", resolve));
  try {
    await withServer(app, appPort, async ({ fetchFn }) => {
      const asked = [];
      const routed = (url, init) => {
        const parsed = new URL(url);
        asked.push(Number(parsed.port));
        if (parsed.port !== String(otherPort)) return fetchFn(url, init);
        return fetch(`http://127.0.0.1:${other.address().port}${parsed.pathname}`, init);
      };
      await body({ fetchFn: routed, asked });
    });
  } finally {
    other.closeAllConnections();
    await new Promise((resolve) => other.close(resolve));
  }
}

const PAGE = { url: "https://example.org/a", title: "A page", html: "<html><body>hi</body></html>", selection: "" };

test("ports are tried in order, the one that answered last time first", () => {
  assert.deepEqual(core.probeOrder(null), [41730, 41731, 41732, 41733, 41734, 41735, 41736, 41737, 41738, 41739]);
  assert.deepEqual(core.probeOrder(41735), [41735, 41730, 41731, 41732, 41733, 41734, 41736, 41737, 41738, 41739]);
  // a remembered port outside the documented range is not one of ours
  assert.deepEqual(core.probeOrder(8080), core.probeOrder(null));
});

test("a pasted token loses blanks and a copied Bearer prefix", () => {
  assert.equal(core.cleanToken("  Bearer abc-123 \n"), "abc-123");
  assert.equal(core.cleanToken(undefined), "");
});

test("the scrap request is a JSON POST with the token, and an empty selection is sent as null", () => {
  const request = core.scrapRequest(41731, "tok", core.pageScrap(PAGE));
  assert.equal(request.url, "http://127.0.0.1:41731/v1/scraps");
  assert.equal(request.init.method, "POST");
  assert.deepEqual(request.init.headers, { Authorization: "Bearer tok", "Content-Type": "application/json" });
  assert.deepEqual(JSON.parse(request.init.body), {
    url: "https://example.org/a",
    title: "A page",
    html: "<html><body>hi</body></html>",
    selection: null,
    kind: "page",
  });
});

test("the three kinds of scrap carry what the contract asks of each", () => {
  assert.deepEqual(core.pageScrap({ ...PAGE, selection: "hi" }).selection, "hi");
  assert.deepEqual(core.selectionScrap("two\nlines", "https://example.org/a", "A page"), {
    url: "https://example.org/a",
    title: "A page",
    html: null,
    selection: "two\nlines",
    kind: "selection",
  });
  assert.deepEqual(core.linkScrap("https://example.org/b", "  The B page "), {
    url: "https://example.org/b",
    title: "The B page",
    html: null,
    selection: null,
    kind: "link",
  });
  // Chromium gives no link text: the address stands in as the title
  assert.equal(core.linkScrap("https://example.org/b", undefined).title, "https://example.org/b");
});

test("the app is found past closed ports and another program's port, and the page goes only to it", async () => {
  const received = [];
  const app = fakeApp(received);
  // 41731 is held by something else that answers 200 but is not SAN Desktop
  const other = (request, response) => answer(response, 200, { hello: "world" });
  await withAnother(app, 41733, other, 41731, async ({ fetchFn, asked }) => {
    const result = await core.sendScrap({ scrap: core.pageScrap(PAGE), token: "secret", lastPort: null, fetchFn });
    assert.deepEqual(result, { outcome: { kind: "scrapped", scrapId: "s1" }, port: 41733 });
    assert.deepEqual(asked, [41730, 41731, 41732, 41733, 41733]);
    assert.equal(received.length, 1);
    assert.equal(received[0].contentType, "application/json");
    assert.equal(received[0].scrap.html, PAGE.html);
  });
});

test("the remembered port is asked first, and a second scrap of the same page is a duplicate", async () => {
  await withServer(fakeApp([]), 41736, async ({ fetchFn, asked }) => {
    const send = () => core.sendScrap({ scrap: core.pageScrap(PAGE), token: "secret", lastPort: 41736, fetchFn });
    assert.deepEqual((await send()).outcome, { kind: "scrapped", scrapId: "s1" });
    assert.deepEqual((await send()).outcome, { kind: "duplicate", scrapId: "s1" });
    assert.deepEqual(asked, [41736, 41736, 41736, 41736]);
  });
});

test("of two SAN Desktops (another user's first), the page goes to the one that accepts the token", async () => {
  const received = [];
  const mine = fakeApp(received);
  const theirs = (request, response) => answer(response, 401, { error: "The token is missing or wrong." });
  await withAnother(mine, 41732, theirs, 41730, async ({ fetchFn, asked }) => {
    const result = await core.sendScrap({ scrap: core.pageScrap(PAGE), token: "secret", lastPort: null, fetchFn });
    assert.deepEqual(result, { outcome: { kind: "scrapped", scrapId: "s1" }, port: 41732 });
    assert.deepEqual(asked, [41730, 41731, 41732, 41732]);
    assert.equal(received.length, 1);
    // with a token neither accepts, the first refusal is what the reader is told
    const wrong = await core.sendScrap({ scrap: core.pageScrap(PAGE), token: "old", lastPort: 41732, fetchFn });
    assert.deepEqual(wrong.outcome, { kind: "token-refused", detail: "The token is missing or wrong." });
    assert.equal(wrong.port, 41732);
    assert.equal(received.length, 1);
  });
});

test("a port that accepts but never answers is given up after the timeout", async () => {
  const silent = http.createServer(() => {}); // holds every request open
  await new Promise((resolve) => silent.listen(0, "127.0.0.1", resolve));
  const fetchFn = (url, init) =>
    new URL(url).port === "41730"
      ? fetch(`http://127.0.0.1:${silent.address().port}/v1/status`, init)
      : Promise.reject(new TypeError("fetch failed"));
  try {
    assert.equal(await core.findApp({ token: "secret", lastPort: null, fetchFn, timeoutMs: 100 }), null);
  } finally {
    silent.closeAllConnections();
    await new Promise((resolve) => silent.close(resolve));
  }
});

test("a wrong token, no token, no app and a refused page each give their own outcome", async () => {
  await withServer(fakeApp([]), 41730, async ({ fetchFn, asked }) => {
    const wrong = await core.sendScrap({ scrap: core.pageScrap(PAGE), token: "nope", lastPort: null, fetchFn });
    assert.deepEqual(wrong, { outcome: { kind: "token-refused", detail: "The token is missing or wrong." }, port: 41730 });

    const big = core.pageScrap({ ...PAGE, url: "https://example.org/big", html: "x".repeat(2000) });
    const refused = await core.sendScrap({ scrap: big, token: "secret", lastPort: null, fetchFn });
    assert.deepEqual(refused.outcome, { kind: "refused", detail: "The page is too large." });

    asked.length = 0;
    const none = await core.sendScrap({ scrap: core.pageScrap(PAGE), token: "", lastPort: null, fetchFn });
    assert.deepEqual(none, { outcome: { kind: "no-token" }, port: null });
    assert.deepEqual(asked, [], "without a token nothing is sent");
  });
  const refuseAll = () => Promise.reject(new TypeError("fetch failed"));
  const absent = await core.sendScrap({ scrap: core.pageScrap(PAGE), token: "secret", lastPort: 41734, fetchFn: refuseAll });
  assert.deepEqual(absent, { outcome: { kind: "not-running" }, port: null });
});

test("each outcome has its badge and a sentence", () => {
  const cases = [
    [{ kind: "scrapped", scrapId: "s1" }, "✓", /Scrapped/],
    [{ kind: "duplicate", scrapId: "s1" }, "=", /Already in SAN Desktop/],
    [{ kind: "not-running" }, "!", /not running.*41730–41739/],
    [{ kind: "no-token" }, "KEY", /No token yet/],
    [{ kind: "token-refused", detail: "The token is wrong." }, "KEY", /refused the token \(The token is wrong\.\)/],
    [{ kind: "refused", detail: "The page is too large." }, "×", /did not take it: The page is too large\./],
    [{ kind: "unreadable" }, "×", /cannot be read/],
  ];
  for (const [outcome, text, title] of cases) {
    const badge = core.badgeFor(outcome);
    assert.equal(badge.text, text, outcome.kind);
    assert.match(badge.title, title);
    assert.match(badge.color, /^#[0-9a-f]{6}$/);
  }
});

test("an answer that is not the app's 200 shape is reported with its status", () => {
  assert.deepEqual(core.answerOutcome(500, null), { kind: "refused", detail: "SAN Desktop answered HTTP 500." });
  assert.deepEqual(core.answerOutcome(400, { error: "Nothing to scrap." }), { kind: "refused", detail: "Nothing to scrap." });
});
