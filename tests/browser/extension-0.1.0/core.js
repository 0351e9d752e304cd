// The core.js of extension 0.1.0, as released before the proof (issue 38): kept to check what SAN Desktop tells
// an extension that was not updated (tests/integration/web/test_extension_proof.py). Not part of any extension.
// What the extension decides, with no browser API in it: which ports to try, the requests it sends to SAN Desktop,
// and what the badge says for each answer. The background script and the options page load it as a classic script
// (a service worker cannot load ES modules in every browser this supports); node's tests load it with require().
"use strict";

(function (root) {
  const APP_NAME = "SAN Desktop";
  const HOST = "127.0.0.1";
  // The app listens on the first free port of this documented range.
  const FIRST_PORT = 41730;
  const LAST_PORT = 41739;
  const PORTS = Object.freeze(Array.from({ length: LAST_PORT - FIRST_PORT + 1 }, (_, i) => FIRST_PORT + i));
  // A closed port on loopback refuses at once; the timeout only bounds a port held by something that never answers.
  const PROBE_TIMEOUT_MS = 800;
  // A large page takes the app a moment to store.
  const SEND_TIMEOUT_MS = 20000;
  const HOST_PERMISSION = `http://${HOST}/*`;

  /** The ports to try, the one that answered last time first (it is almost always still the one). */
  function probeOrder(lastPort) {
    const remembered = PORTS.includes(lastPort) ? [lastPort] : [];
    return remembered.concat(PORTS.filter((port) => port !== lastPort));
  }

  /** A token as pasted: surrounding blanks and a copied "Bearer " prefix are not part of it. */
  function cleanToken(text) {
    return String(text ?? "")
      .trim()
      .replace(/^Bearer\s+/i, "")
      .trim();
  }

  function baseUrl(port) {
    return `http://${HOST}:${port}`;
  }

  function statusRequest(port, token) {
    return {
      url: `${baseUrl(port)}/v1/status`,
      init: { method: "GET", headers: { Authorization: `Bearer ${token}` } },
    };
  }

  function scrapRequest(port, token, scrap) {
    const body = {
      url: String(scrap.url),
      title: String(scrap.title ?? ""),
      html: scrap.html ?? null,
      selection: scrap.selection ? scrap.selection : null,
      kind: scrap.kind,
    };
    return {
      url: `${baseUrl(port)}/v1/scraps`,
      init: {
        method: "POST",
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
        body: JSON.stringify(body),
      },
    };
  }

  /** What the toolbar button and the shortcut send: the rendered page, with the selection when there is one. */
  function pageScrap(captured) {
    return {
      url: captured.url,
      title: captured.title ?? "",
      html: captured.html ?? null,
      selection: captured.selection || null,
      kind: "page",
    };
  }

  /** The context menu's "Scrap selection": the text the reader picked, with the page it came from. */
  function selectionScrap(selection, pageUrl, title) {
    return { url: pageUrl, title: title ?? "", html: null, selection: selection || null, kind: "selection" };
  }

  /** The context menu's "Scrap link": the link itself, titled with its text when the browser gives it. */
  function linkScrap(linkUrl, linkText) {
    const text = String(linkText ?? "").trim();
    return { url: linkUrl, title: text || linkUrl, html: null, selection: null, kind: "link" };
  }

  async function fetchWithTimeout(fetchFn, request, timeoutMs) {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    try {
      return await fetchFn(request.url, { ...request.init, signal: controller.signal });
    } finally {
      clearTimeout(timer);
    }
  }

  async function readJson(response) {
    try {
      return await response.json();
    } catch {
      return null;
    }
  }

  /** Whether an answer is SAN Desktop's: its status names the app, and its refusals are {"error": sentence}. */
  function isAppAnswer(status, body) {
    if (body === null || typeof body !== "object") return false;
    if (status === 200) return body.app === APP_NAME;
    return status >= 400 && status < 500 && typeof body.error === "string";
  }

  /**
   * The port of the range where SAN Desktop accepts the token on GET /v1/status, as {port, status, body}; when no
   * instance accepts it, the first one's refusal (another user's SAN Desktop, or this one given an old token); null
   * when none answers. Another program on one of these ports is passed over, so a page is never sent to it.
   */
  async function findApp({ token, lastPort, fetchFn, timeoutMs = PROBE_TIMEOUT_MS }) {
    let refusal = null;
    for (const port of probeOrder(lastPort)) {
      let response;
      try {
        response = await fetchWithTimeout(fetchFn, statusRequest(port, token), timeoutMs);
      } catch {
        continue; // refused, timed out or blocked: nothing of ours there
      }
      const body = await readJson(response);
      if (!isAppAnswer(response.status, body)) continue;
      if (response.status === 200) return { port, status: response.status, body };
      refusal = refusal ?? { port, status: response.status, body };
    }
    return refusal;
  }

  /** What the app's answer to POST /v1/scraps means for the reader. */
  function answerOutcome(status, body) {
    const sentence = body && typeof body.error === "string" ? body.error : "";
    if (status === 200 && body && typeof body.scrap_id === "string") {
      return { kind: body.duplicate ? "duplicate" : "scrapped", scrapId: body.scrap_id };
    }
    if (status === 401) return { kind: "token-refused", detail: sentence };
    return { kind: "refused", detail: sentence || `SAN Desktop answered HTTP ${status}.` };
  }

  /**
   * Finds the app and sends one scrap; resolves to an outcome for badgeFor() and the port that answered (to
   * remember), never rejects.
   */
  async function sendScrap({ scrap, token, lastPort, fetchFn, probeTimeoutMs, sendTimeoutMs = SEND_TIMEOUT_MS }) {
    if (!token) return { outcome: { kind: "no-token" }, port: null };
    const found = await findApp({ token, lastPort, fetchFn, timeoutMs: probeTimeoutMs });
    if (found === null) return { outcome: { kind: "not-running" }, port: null };
    if (found.status !== 200) return { outcome: answerOutcome(found.status, found.body), port: found.port };
    let response;
    try {
      response = await fetchWithTimeout(fetchFn, scrapRequest(found.port, token, scrap), sendTimeoutMs);
    } catch {
      // it answered a moment ago, so it quit or hung while storing
      return { outcome: { kind: "not-running" }, port: found.port };
    }
    return { outcome: answerOutcome(response.status, await readJson(response)), port: found.port };
  }

  const GREEN = "#2f6f5e";
  const GREY = "#5f6368";
  const RED = "#b3261e";
  const AMBER = "#a05a00";

  /** The badge text, its colour and the tooltip sentence for an outcome. */
  function badgeFor(outcome) {
    switch (outcome.kind) {
      case "scrapped":
        return { text: "✓", color: GREEN, title: "Scrapped into SAN Desktop." };
      case "duplicate":
        return { text: "=", color: GREY, title: "Already in SAN Desktop: this was scrapped before." };
      case "not-running":
        return {
          text: "!",
          color: RED,
          title: `SAN Desktop is not running: nothing answered on ${HOST} ports ${FIRST_PORT}–${LAST_PORT}. Start it and try again.`,
        };
      case "no-token":
        return {
          text: "KEY",
          color: AMBER,
          title: "No token yet: copy it from SAN Desktop's Settings and paste it into this extension's options.",
        };
      case "token-refused":
        return {
          text: "KEY",
          color: AMBER,
          title: `SAN Desktop refused the token${outcome.detail ? ` (${outcome.detail})` : ""}: paste the current one from its Settings into this extension's options.`,
        };
      case "unreadable":
        return {
          text: "×",
          color: RED,
          title: "This page cannot be read by extensions (browser pages and extension stores are off limits).",
        };
      case "refused":
        return { text: "×", color: RED, title: `SAN Desktop did not take it: ${outcome.detail}` };
      default:
        return { text: "×", color: RED, title: "Something went wrong while scrapping." };
    }
  }

  const api = {
    APP_NAME,
    FIRST_PORT,
    LAST_PORT,
    PORTS,
    HOST_PERMISSION,
    probeOrder,
    cleanToken,
    statusRequest,
    scrapRequest,
    pageScrap,
    selectionScrap,
    linkScrap,
    findApp,
    answerOutcome,
    sendScrap,
    badgeFor,
  };
  if (typeof module === "object" && module.exports) module.exports = api;
  else root.SanCore = api;
})(globalThis);
