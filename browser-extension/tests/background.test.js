// background.js run as Chromium runs it (a service worker that importScripts core.js), against a stand-in for the
// extension API that records what the badge shows, and a real HTTP server on loopback in SAN Desktop's place.
// The function injected into the page is run from its source text in a context of its own, as the browser does
// after serialising it, so it may use nothing from background.js.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const http = require("node:http");
const nodeCrypto = require("node:crypto");
const path = require("node:path");
const vm = require("node:vm");

const HERE = path.join(__dirname, "..");
const APP_PORT = 41734;
const SQUATTER_PORT = 41731;

function event() {
  const listeners = [];
  return { addListener: (fn) => listeners.push(fn), fire: (...args) => Promise.all(listeners.map((fn) => fn(...args))) };
}

/** The page the injected functions see. */
function runInPage(func, page) {
  if (page === null) return Promise.reject(new Error("Cannot access contents of the page."));
  const context = vm.createContext({
    location: { href: page.url },
    document: { title: page.title, documentElement: { outerHTML: page.html } },
    getSelection: () => ({ toString: () => page.selection }),
  });
  return Promise.resolve([{ result: vm.runInContext(`(${func.toString()})()`, context) }]);
}

function loadBackground({ storage, page, appServerPort, squatterPort = null }) {
  const badges = {};
  const opened = [];
  const injected = [];
  const on = (tabId) => (badges[tabId] ??= {});
  const chrome = {
    runtime: {
      onInstalled: event(),
      onStartup: event(),
      openOptionsPage: async () => opened.push(true),
      getManifest: () => JSON.parse(fs.readFileSync(path.join(HERE, "manifest.json"), "utf8")),
    },
    action: {
      onClicked: event(),
      setBadgeText: async ({ tabId, text }) => (on(tabId).text = text),
      setBadgeBackgroundColor: async ({ tabId, color }) => (on(tabId).color = color),
      setBadgeTextColor: async () => {},
      setTitle: async ({ tabId, title }) => (on(tabId).title = title),
    },
    contextMenus: { onClicked: event(), removeAll: async () => {}, create: () => {} },
    tabs: { onUpdated: event() },
    storage: {
      local: {
        get: async (keys) => Object.fromEntries([keys].flat().filter((k) => k in storage).map((k) => [k, storage[k]])),
        set: async (values) => Object.assign(storage, values),
      },
    },
    permissions: { contains: async () => true },
    scripting: {
      executeScript: ({ target, func }) => {
        injected.push(JSON.parse(JSON.stringify(target))); // a plain copy: objects of the script's realm compare unequal
        return runInPage(func, page);
      },
    },
  };
  // every port of the range but the app's (and a squatter's) refuses, as closed ports do
  const fetchFn = (url, init) => {
    const parsed = new URL(url);
    const real = { [APP_PORT]: appServerPort, [SQUATTER_PORT]: squatterPort }[parsed.port];
    if (!real) return Promise.reject(new TypeError("fetch failed"));
    parsed.port = String(real);
    return fetch(parsed, init);
  };
  const context = vm.createContext({
    chrome,
    fetch: fetchFn,
    crypto, // (WebCrypto, as a service worker has it)
    TextEncoder,
    atob,
    btoa,
    AbortController,
    setTimeout,
    clearTimeout,
    URL,
    console,
  });
  context.importScripts = (name) => vm.runInContext(fs.readFileSync(path.join(HERE, name), "utf8"), context);
  vm.runInContext(fs.readFileSync(path.join(HERE, "background.js"), "utf8"), context, { filename: "background.js" });
  return { chrome, badges, opened, injected, storage };
}

/** SAN Desktop's endpoint as the contract specifies it, recording what it is sent. */
async function withApp(body) {
  const received = [];
  const server = http.createServer((request, response) => {
    const reply = (status, value) => {
      response.writeHead(status, { "Content-Type": "application/json" });
      response.end(JSON.stringify(value));
    };
    const url = new URL(request.url, "http://127.0.0.1");
    if (url.pathname === "/v2/hello") {
      const proof = nodeCrypto
        .createHmac("sha256", "secret")
        .update(`san-server\n127.0.0.1:${APP_PORT}\n${url.searchParams.get("nonce")}`)
        .digest("base64url");
      return reply(200, { app: "SAN Desktop", version: "1.0", protocol: 2, proof });
    }
    if (request.headers.authorization !== "Bearer secret") return reply(401, { error: "Wrong token." });
    const chunks = [];
    request.on("data", (chunk) => chunks.push(chunk));
    request.on("end", () => {
      received.push(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      reply(200, { scrap_id: `s${received.length}`, duplicate: false });
    });
    return undefined;
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    await body({ port: server.address().port, received });
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

const PAGE = {
  url: "https://example.org/article",
  title: "An article",
  html: '<html><body><p id="late">added by the page\'s script</p></body></html>',
  selection: "two\nlines",
};
const TAB = { id: 7, title: "An article" };

test("the toolbar button sends the rendered page with its selection, and the badge says it was scrapped", async () => {
  await withApp(async ({ port, received }) => {
    const bg = loadBackground({ storage: { token: "secret" }, page: PAGE, appServerPort: port });
    await bg.chrome.action.onClicked.fire(TAB);
    assert.deepEqual(received, [
      { url: PAGE.url, title: PAGE.title, html: PAGE.html, selection: "two\nlines", kind: "page" },
    ]);
    assert.deepEqual(bg.injected, [{ tabId: 7 }]);
    assert.equal(bg.badges[7].text, "✓");
    assert.equal(bg.badges[7].title, "Scrapped into SAN Desktop.");
    assert.equal(bg.storage.lastPort, APP_PORT, "the port that answered is remembered");
  });
});

test("without a token nothing is sent: the badge asks for the key and the options page opens", async () => {
  await withApp(async ({ port, received }) => {
    const bg = loadBackground({ storage: {}, page: PAGE, appServerPort: port });
    await bg.chrome.action.onClicked.fire(TAB);
    assert.deepEqual(received, []);
    assert.equal(bg.badges[7].text, "KEY");
    assert.deepEqual(bg.opened, [true]);
  });
});

test("a page extensions may not read is reported on the badge and nothing is sent", async () => {
  await withApp(async ({ port, received }) => {
    const bg = loadBackground({ storage: { token: "secret" }, page: null, appServerPort: port });
    await bg.chrome.action.onClicked.fire(TAB);
    assert.deepEqual(received, []);
    assert.equal(bg.badges[7].text, "×");
    assert.match(bg.badges[7].title, /cannot be read/);
  });
});

test("the context menu sends a selection with its line breaks, and a link titled with its text", async () => {
  await withApp(async ({ port, received }) => {
    const bg = loadBackground({ storage: { token: "secret" }, page: PAGE, appServerPort: port });
    const selection = { menuItemId: "san-scrap-selection", selectionText: "two lines", pageUrl: PAGE.url, frameId: 0 };
    await bg.chrome.contextMenus.onClicked.fire(selection, TAB);
    const link = { menuItemId: "san-scrap-link", linkUrl: "https://example.org/next", linkText: "Next part" };
    await bg.chrome.contextMenus.onClicked.fire(link, TAB);
    assert.deepEqual(received, [
      { url: PAGE.url, title: "An article", html: null, selection: "two\nlines", kind: "selection" },
      { url: "https://example.org/next", title: "Next part", html: null, selection: null, kind: "link" },
    ]);
    assert.deepEqual(bg.injected, [{ tabId: 7, frameIds: [0] }], "a link needs nothing from the page");
  });
});

test("a new page in the tab starts without the last page's badge", async () => {
  await withApp(async ({ port }) => {
    const bg = loadBackground({ storage: { token: "secret" }, page: PAGE, appServerPort: port });
    await bg.chrome.action.onClicked.fire(TAB);
    await bg.chrome.tabs.onUpdated.fire(7, { status: "loading" });
    assert.equal(bg.badges[7].text, "");
    assert.equal(bg.badges[7].title, "Scrap this page into SAN Desktop");
  });
});

test("a squatter on a lower port gets nothing; the page goes to the app and the squatter is named for the options page", async () => {
  const squatterSaw = [];
  const squatter = http.createServer((request, response) => {
    const chunks = [];
    request.on("data", (chunk) => chunks.push(chunk));
    request.on("end", () => {
      squatterSaw.push({ url: request.url, headers: request.headers, body: Buffer.concat(chunks).toString("utf8") });
      response.writeHead(200, { "Content-Type": "application/json" });
      response.end(JSON.stringify({ app: "SAN Desktop", protocol: 2, proof: "B".repeat(43) }));
    });
  });
  await new Promise((resolve) => squatter.listen(0, "127.0.0.1", resolve));
  try {
    await withApp(async ({ port, received }) => {
      const bg = loadBackground({
        storage: { token: "secret" },
        page: PAGE,
        appServerPort: port,
        squatterPort: squatter.address().port,
      });
      await bg.chrome.action.onClicked.fire(TAB);
      assert.equal(received.length, 1);
      assert.equal(received[0].html, PAGE.html);
      assert.equal(squatterSaw.length, 1);
      assert.match(squatterSaw[0].url, /^\/v2\/hello\?nonce=/);
      assert.equal(squatterSaw[0].headers.authorization, undefined);
      assert.ok(!JSON.stringify(squatterSaw).includes("secret"));
      assert.ok(!JSON.stringify(squatterSaw).includes(PAGE.url));
      assert.equal(bg.badges[7].text, "✓");
      assert.match(bg.badges[7].title, /Passed over port 41731/);
      // (a plain copy: objects of the script's realm compare unequal)
      assert.deepEqual(JSON.parse(JSON.stringify(bg.storage.skippedPorts)), [
        { port: SQUATTER_PORT, reason: "answered with a proof that does not match this token" },
      ]);
      assert.equal(bg.storage.lastPort, APP_PORT);
    });
  } finally {
    squatter.closeAllConnections();
    await new Promise((resolve) => squatter.close(resolve));
  }
});
