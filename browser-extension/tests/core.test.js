// Node's test runner over core.js (node --test browser-extension/tests/): the port search by proof, the requests and
// the badges, against real HTTP servers on 127.0.0.1 — one answering as SAN Desktop's endpoint is specified to, and
// others holding ports of the range as another program could (silent, lying, replaying or relaying to the app).
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const http = require("node:http");
const nodeCrypto = require("node:crypto");
const path = require("node:path");

const core = require(path.join(__dirname, "..", "core.js"));

const TOKEN = "secret";

/** What SAN Desktop on `port` answers to `nonce` (san_desktop/web/proof.py), computed here with node's own HMAC. */
function proofFor(token, port, nonce) {
  return nodeCrypto
    .createHmac("sha256", token)
    .update(`san-server\n127.0.0.1:${port}\n${nonce}`)
    .digest("base64url");
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

/** Everything a server was sent: method, path, headers and body of each request. */
function recorder() {
  const requests = [];
  const record = async (request) => {
    const entry = { method: request.method, url: request.url, headers: request.headers, body: await readBody(request) };
    requests.push(entry);
    return entry;
  };
  return { requests, record };
}

/** Answers as the app's endpoint on `port` of the range: the hello with its proof, a scrap stored once per URL. */
function fakeApp(port, { token = TOKEN } = {}) {
  const { requests, record } = recorder();
  const stored = new Set();
  const handler = async (request, response) => {
    const entry = await record(request);
    const url = new URL(request.url, "http://127.0.0.1");
    if (request.method === "GET" && url.pathname === "/v2/hello") {
      const nonce = url.searchParams.get("nonce");
      return answer(response, 200, { app: "SAN Desktop", version: "1.2.3", protocol: 2, proof: proofFor(token, port, nonce) });
    }
    if (request.headers.authorization !== `Bearer ${token}`) {
      return answer(response, 401, { error: "The token is missing or wrong." });
    }
    if (request.method === "POST" && url.pathname === "/v2/scraps") {
      const scrap = JSON.parse(entry.body);
      if (scrap.html && scrap.html.length > 1000) return answer(response, 413, { error: "The page is too large." });
      const duplicate = stored.has(scrap.url);
      stored.add(scrap.url);
      return answer(response, 200, { scrap_id: `s${stored.size}`, duplicate });
    }
    return answer(response, 404, { error: "No such endpoint." });
  };
  return { handler, requests, scraps: () => requests.filter((r) => r.url === "/v2/scraps").map((r) => JSON.parse(r.body)) };
}

/**
 * Real servers on ephemeral loopback ports standing for ports of the range ({41733: handler, ...}), and a fetch that
 * sends what the extension addresses to a port of the range to the server standing for it; every other port of
 * the range refuses, as a closed port does. `body` gets the fetch, the ports asked, and each server's real port.
 */
async function withPorts(handlers, body) {
  const servers = {};
  for (const [port, handler] of Object.entries(handlers)) {
    const server = http.createServer(handler);
    await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
    servers[port] = server;
  }
  const asked = [];
  const fetchFn = (url, init) => {
    const parsed = new URL(url);
    asked.push(Number(parsed.port));
    const server = servers[parsed.port];
    if (!server) return Promise.reject(new TypeError("fetch failed"));
    parsed.port = String(server.address().port);
    return fetch(parsed, init);
  };
  const real = (port) => servers[port].address().port;
  try {
    await body({ fetchFn, asked, real });
  } finally {
    for (const server of Object.values(servers)) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }
}

/** Nothing of the token, and nothing of a page, in what a server was sent. */
function assertGotNothingOfOurs(requests, page) {
  for (const request of requests) {
    assert.equal(request.method, "GET");
    assert.match(request.url, /^\/v2\/hello\?nonce=[A-Za-z0-9_-]{43}$/);
    assert.equal(request.headers.authorization, undefined);
    assert.equal(request.body, "");
    const everything = JSON.stringify(request);
    assert.ok(!everything.includes(TOKEN), "the token reached it");
    if (page) assert.ok(!everything.includes(page.url) && !everything.includes(page.title), "the page reached it");
  }
}

const PAGE = { url: "https://example.org/a", title: "A page", html: "<html><body>hi</body></html>", selection: "" };
const send = (fetchFn, extra = {}) =>
  core.sendScrap({ scrap: core.pageScrap(PAGE), token: TOKEN, lastPort: null, fetchFn, ...extra });

test("ports are tried in order, the one that proved itself last time first", () => {
  assert.deepEqual(core.probeOrder(null), [41730, 41731, 41732, 41733, 41734, 41735, 41736, 41737, 41738, 41739]);
  assert.deepEqual(core.probeOrder(41735), [41735, 41730, 41731, 41732, 41733, 41734, 41736, 41737, 41738, 41739]);
  // a remembered port outside the documented range is not one of ours
  assert.deepEqual(core.probeOrder(8080), core.probeOrder(null));
});

test("a pasted token loses blanks and a copied Bearer prefix", () => {
  assert.equal(core.cleanToken("  Bearer abc-123 \n"), "abc-123");
  assert.equal(core.cleanToken(undefined), "");
});

test("the hello carries a fresh nonce and neither the token nor anything of a page", () => {
  const first = core.newNonce(crypto);
  const second = core.newNonce(crypto);
  assert.match(first, /^[A-Za-z0-9_-]{43}$/);
  assert.notEqual(first, second);
  const hello = core.helloRequest(41731, first);
  assert.equal(hello.url, `http://127.0.0.1:41731/v2/hello?nonce=${first}`);
  assert.deepEqual(hello.init, { cache: "no-store", credentials: "omit", redirect: "error", method: "GET" });
});

test("the proof is the one the app computes (a vector from san_desktop/web/proof.py)", async () => {
  const nonce = "a".repeat(22);
  const proof = "9j0XQYfQ1ru7-wsQWiHv5F2cruHKUUseSszJV-OdVuM"; // server_proof("tok", 41790, nonce)
  assert.equal(proofFor("tok", 41790, nonce), proof);
  assert.equal(await core.proofHolds({ token: "tok", port: 41790, nonce, proof, cryptoImpl: crypto }), true);
  // another port, token or nonce, and anything not a proof, do not hold
  assert.equal(await core.proofHolds({ token: "tok", port: 41791, nonce, proof, cryptoImpl: crypto }), false);
  assert.equal(await core.proofHolds({ token: "tok2", port: 41790, nonce, proof, cryptoImpl: crypto }), false);
  assert.equal(await core.proofHolds({ token: "tok", port: 41790, nonce: "b".repeat(22), proof, cryptoImpl: crypto }), false);
  for (const bad of [undefined, null, 42, "", "x".repeat(43) + "=", proof.slice(1)]) {
    assert.equal(await core.proofHolds({ token: "tok", port: 41790, nonce, proof: bad, cryptoImpl: crypto }), false);
  }
});

test("the scrap request is a JSON POST with the token, and an empty selection is sent as null", () => {
  const request = core.scrapRequest(41731, "tok", core.pageScrap(PAGE));
  assert.equal(request.url, "http://127.0.0.1:41731/v2/scraps");
  assert.equal(request.init.method, "POST");
  assert.equal(request.init.redirect, "error");
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

test("a squatter on a lower port gets neither the token nor the page; the app on a higher port gets the page", async () => {
  const squatter = recorder();
  // it answers as SAN Desktop would, but cannot compute the proof
  const lying = async (request, response) => {
    await squatter.record(request);
    answer(response, 200, { app: "SAN Desktop", version: "9", protocol: 2, proof: "A".repeat(43) });
  };
  const app = fakeApp(41735);
  await withPorts({ 41731: lying, 41735: app.handler }, async ({ fetchFn, asked }) => {
    const result = await send(fetchFn);
    assert.deepEqual(result.outcome.kind, "scrapped");
    assert.equal(result.port, 41735);
    assert.deepEqual(result.skipped, [{ port: 41731, reason: "answered with a proof that does not match this token" }]);
    assert.deepEqual(asked, [41730, 41731, 41732, 41733, 41734, 41735, 41735]);
    assertGotNothingOfOurs(squatter.requests, PAGE);
    assert.equal(squatter.requests.length, 1);
    assert.deepEqual(app.scraps(), [{ ...core.pageScrap(PAGE), selection: null }]);
    // the hello that reached the app carried no token either: only the scrap that followed its proof did
    assert.equal(app.requests[0].headers.authorization, undefined);
    assert.equal(app.requests[1].headers.authorization, `Bearer ${TOKEN}`);
    // the badge says scrapped, and names the port passed over
    const badge = core.badgeFor(result.outcome);
    assert.equal(badge.text, "✓");
    assert.match(badge.title, /Passed over port 41731: it did not prove to hold the token, so nothing was sent there/);
  });
});

test("a squatter that relays the nonce to the app gets a proof for the app's port, which does not hold for its own", async () => {
  const squatter = recorder();
  let relayed = 0;
  let appPort = 0; // the app's real port, known once it listens
  const app = fakeApp(41736);
  await withPorts(
    {
      41730: async (request, response) => {
        await squatter.record(request);
        // passes the hello on to the real app, as any local program can, and answers with what it got
        const reply = await fetch(`http://127.0.0.1:${appPort}${request.url}`);
        relayed += 1;
        response.writeHead(reply.status, { "Content-Type": "application/json" });
        response.end(await reply.text());
      },
      41736: app.handler,
    },
    async ({ fetchFn, real }) => {
      appPort = real(41736);
      const result = await send(fetchFn);
      assert.equal(relayed, 1);
      assert.equal(result.outcome.kind, "scrapped");
      assert.equal(result.port, 41736);
      assert.deepEqual(result.skipped.map((item) => item.port), [41730]);
      assertGotNothingOfOurs(squatter.requests, PAGE);
      assert.equal(app.scraps().length, 1);
    },
  );
});
test("a squatter that replays a proof it saw before is passed over: each hello has a new nonce", async () => {
  const squatter = recorder();
  const app = fakeApp(41730);
  let seen = null;
  await withPorts({ 41730: app.handler }, async ({ fetchFn }) => {
    // a proof the app gave once, for its own port and a nonce of then
    const nonce = core.newNonce(crypto);
    const reply = await fetchFn(core.helloRequest(41730, nonce).url, {});
    seen = (await reply.json()).proof;
  });
  const replaying = async (request, response) => {
    await squatter.record(request);
    answer(response, 200, { app: "SAN Desktop", protocol: 2, proof: seen });
  };
  await withPorts({ 41730: replaying }, async ({ fetchFn }) => {
    const result = await send(fetchFn);
    assert.deepEqual(result.outcome, { kind: "unproven", skipped: result.skipped });
    assert.deepEqual(result.skipped.map((item) => item.port), [41730]);
    assertGotNothingOfOurs(squatter.requests, PAGE);
  });
});

test("with no app running, a squatter alone gets nothing and the badge says which port failed the proof", async () => {
  const squatter = recorder();
  const tokenAsking = async (request, response) => {
    await squatter.record(request);
    answer(response, 401, { error: "Send me your token." }); // as SAN Desktop before the proof did
  };
  await withPorts({ 41732: tokenAsking }, async ({ fetchFn }) => {
    const result = await send(fetchFn);
    assert.equal(result.outcome.kind, "unproven");
    assert.equal(result.port, null);
    assert.deepEqual(result.skipped, [
      {
        port: 41732,
        reason: "asked for the token before proving it holds it (a SAN Desktop older than the proof answers so)",
      },
    ]);
    assertGotNothingOfOurs(squatter.requests, PAGE);
    const badge = core.badgeFor(result.outcome);
    assert.equal(badge.text, "KEY");
    assert.match(badge.title, /^Nothing was sent: port 41732 answered but did not prove to hold this token\./);
  });
});

test("the remembered port proves itself again before every scrap, and a second scrap of the page is a duplicate", async () => {
  const app = fakeApp(41736);
  await withPorts({ 41736: app.handler }, async ({ fetchFn, asked }) => {
    const again = () => send(fetchFn, { lastPort: 41736 });
    assert.deepEqual((await again()).outcome, { kind: "scrapped", scrapId: "s1", skipped: [] });
    assert.deepEqual((await again()).outcome, { kind: "duplicate", scrapId: "s1", skipped: [] });
    assert.deepEqual(asked, [41736, 41736, 41736, 41736]);
    assert.deepEqual(
      app.requests.map((request) => request.url.replace(/nonce=.*/, "nonce=N")),
      ["/v2/hello?nonce=N", "/v2/scraps", "/v2/hello?nonce=N", "/v2/scraps"],
    );
  });
});

test("of two SAN Desktops (another user's first), the page goes to the one that holds this token", async () => {
  const theirs = fakeApp(41730, { token: "their-token" });
  const mine = fakeApp(41732);
  await withPorts({ 41730: theirs.handler, 41732: mine.handler }, async ({ fetchFn }) => {
    const result = await send(fetchFn);
    assert.equal(result.port, 41732);
    assert.equal(result.outcome.kind, "scrapped");
    assert.deepEqual(theirs.scraps(), []);
    assertGotNothingOfOurs(theirs.requests, PAGE);
    assert.equal(mine.scraps().length, 1);
    // with a token neither holds, nothing goes anywhere and both are named
    const wrong = await send(fetchFn, { token: "old" });
    assert.equal(wrong.outcome.kind, "unproven");
    assert.deepEqual(wrong.skipped.map((item) => item.port), [41730, 41732]);
    assert.equal(mine.scraps().length, 1);
    assert.match(core.badgeFor(wrong.outcome).title, /ports 41730 and 41732 answered/);
  });
});

test("a port that takes the connection and never answers is given up after the timeout, and named", async () => {
  const silent = () => {}; // holds every request open
  await withPorts({ 41730: silent }, async ({ fetchFn }) => {
    const found = await core.findApp({ token: TOKEN, lastPort: null, fetchFn, timeoutMs: 100 });
    assert.deepEqual(found, {
      port: null,
      body: null,
      skipped: [{ port: 41730, reason: "took the connection but did not answer" }],
    });
  });
});

test("an app that proves itself but never answers the scrap is reported as not answering, not as not running", async () => {
  const app = fakeApp(41730);
  const hanging = (request, response) => (request.url.startsWith("/v2/hello") ? app.handler(request, response) : undefined);
  await withPorts({ 41730: hanging }, async ({ fetchFn }) => {
    const result = await send(fetchFn, { sendTimeoutMs: 200 });
    assert.deepEqual(result.outcome, { kind: "no-answer", skipped: [] });
    assert.match(core.badgeFor(result.outcome).title, /did not answer in time/);
  });
});

test("no token, no app and a refused page each give their own outcome", async () => {
  const app = fakeApp(41730);
  await withPorts({ 41730: app.handler }, async ({ fetchFn, asked }) => {
    const big = core.pageScrap({ ...PAGE, url: "https://example.org/big", html: "x".repeat(2000) });
    const refused = await core.sendScrap({ scrap: big, token: TOKEN, lastPort: null, fetchFn });
    assert.deepEqual(refused.outcome, { kind: "refused", detail: "The page is too large.", skipped: [] });

    asked.length = 0;
    const none = await core.sendScrap({ scrap: core.pageScrap(PAGE), token: "", lastPort: null, fetchFn });
    assert.deepEqual(none, { outcome: { kind: "no-token" }, port: null, skipped: [] });
    assert.deepEqual(asked, [], "without a token nothing is sent");
  });
  const refuseAll = () => Promise.reject(new TypeError("fetch failed"));
  const absent = await send(refuseAll, { lastPort: 41734 });
  assert.deepEqual(absent, { outcome: { kind: "not-running" }, port: null, skipped: [] });
});

test("each outcome has its badge and a sentence", () => {
  const cases = [
    [{ kind: "scrapped", scrapId: "s1" }, "✓", /^Scrapped into SAN Desktop\.$/],
    [{ kind: "duplicate", scrapId: "s1" }, "=", /Already in SAN Desktop/],
    [{ kind: "not-running" }, "!", /not running.*41730–41739/],
    [{ kind: "no-answer" }, "!", /did not answer in time/],
    [{ kind: "unproven", skipped: [{ port: 41735, reason: "x" }] }, "KEY", /port 41735 answered but did not prove/],
    [{ kind: "no-token" }, "KEY", /No token yet/],
    [{ kind: "token-refused", detail: "The token is wrong." }, "KEY", /refused the token \(The token is wrong\.\)/],
    [{ kind: "refused", detail: "The page is too large." }, "×", /did not take it: The page is too large\.$/],
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
