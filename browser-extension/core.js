// What the extension decides, with no browser API in it: which ports to try, how a port proves it is SAN Desktop
// holding the token (before the token or a page goes to it), the requests it sends, and what the badge says for
// each answer. The background script and the options page load it as a classic script
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
  // The app reads a page for at most 30 s, after waiting for a reader at most as long: past this it is not coming.
  const SEND_TIMEOUT_MS = 90000;
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

  // --- the proof (san_desktop/web/proof.py computes the same) -------------------------------------------------
  // The token goes only to a port that proved it holds it: asked with a fresh nonce and no token, the app answers
  // HMAC-SHA256(token, "san-server\n127.0.0.1:<port>\n<nonce>"). The port in the message makes an answer relayed
  // from the app on another port useless to a program that holds this one.

  function base64url(bytes) {
    let binary = "";
    for (const byte of bytes) binary += String.fromCharCode(byte);
    return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  /** The 32 bytes of an HMAC-SHA256 in base64url, or null for anything else. */
  function proofBytes(text) {
    if (typeof text !== "string" || !/^[A-Za-z0-9_-]{43}$/.test(text)) return null;
    const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/") + "=");
    return Uint8Array.from(binary, (c) => c.charCodeAt(0));
  }

  function newNonce(cryptoImpl) {
    return base64url(cryptoImpl.getRandomValues(new Uint8Array(32)));
  }

  function proofMessage(port, nonce) {
    return `san-server\n${HOST}:${port}\n${nonce}`;
  }

  /** Whether `proof` is the app's answer to `nonce` on `port` for this token (WebCrypto's HMAC, compared by it). */
  async function proofHolds({ token, port, nonce, proof, cryptoImpl }) {
    const signature = proofBytes(proof);
    if (signature === null) return false;
    const encoder = new TextEncoder();
    const key = await cryptoImpl.subtle.importKey(
      "raw",
      encoder.encode(token),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["verify"],
    );
    return cryptoImpl.subtle.verify("HMAC", key, signature, encoder.encode(proofMessage(port, nonce)));
  }

  // --- the requests ----------------------------------------------------------------------------------------------

  // Nothing of ours redirects, and a redirect must not carry a request elsewhere.
  const PLAIN = { cache: "no-store", credentials: "omit", redirect: "error" };

  /** The challenge: carries no token and nothing of a page. */
  function helloRequest(port, nonce) {
    return {
      url: `${baseUrl(port)}/v2/hello?nonce=${nonce}`,
      init: { ...PLAIN, method: "GET" },
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
      url: `${baseUrl(port)}/v2/scraps`,
      init: {
        ...PLAIN,
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

  class TimedOut extends Error {}

  async function fetchWithTimeout(fetchFn, request, timeoutMs) {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    try {
      return await fetchFn(request.url, { ...request.init, signal: controller.signal });
    } catch (error) {
      throw timedOut ? new TimedOut() : error;
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

  /** Why a port that answered the hello is passed over, in words for the options page. */
  function skipReason(status, body) {
    if (body && typeof body.proof === "string") return "answered with a proof that does not match this token";
    if (status === 401 && body && typeof body.error === "string") {
      return "asked for the token before proving it holds it (a SAN Desktop older than the proof answers so)";
    }
    return `answered without proving it holds this token (HTTP ${status})`;
  }

  /**
   * The first port of the range, the remembered one first, whose answer to a fresh nonce proves that it holds the
   * token: {port, body, skipped}. Ports that answered without that proof are passed over and listed in `skipped`
   * as {port, reason}; nothing of the token or of a page goes to them. {port: null, body: null, skipped} when no
   * port proved it.
   */
  async function findApp({ token, lastPort, fetchFn, cryptoImpl = globalThis.crypto, timeoutMs = PROBE_TIMEOUT_MS }) {
    const skipped = [];
    for (const port of probeOrder(lastPort)) {
      const nonce = newNonce(cryptoImpl);
      let response;
      try {
        response = await fetchWithTimeout(fetchFn, helloRequest(port, nonce), timeoutMs);
      } catch (error) {
        // a closed port refuses at once: nothing there; one that takes the connection and stays silent is held
        if (error instanceof TimedOut) skipped.push({ port, reason: "took the connection but did not answer" });
        continue;
      }
      const body = await readJson(response);
      const proof = response.status === 200 && body && typeof body === "object" ? body.proof : undefined;
      if (await proofHolds({ token, port, nonce, proof, cryptoImpl })) return { port, body, skipped };
      skipped.push({ port, reason: skipReason(response.status, body) });
    }
    return { port: null, body: null, skipped };
  }

  /** What the app's answer to POST /v2/scraps means for the reader. */
  function answerOutcome(status, body) {
    const sentence = body && typeof body.error === "string" ? body.error : "";
    if (status === 200 && body && typeof body.scrap_id === "string") {
      return { kind: body.duplicate ? "duplicate" : "scrapped", scrapId: body.scrap_id };
    }
    if (status === 401) return { kind: "token-refused", detail: sentence };
    return { kind: "refused", detail: sentence || `SAN Desktop answered HTTP ${status}.` };
  }

  /**
   * Finds the app by its proof and sends it one scrap; resolves to an outcome for badgeFor(), the port that proved
   * itself (to remember) and the ports passed over (for the options page); never rejects.
   */
  async function sendScrap({
    scrap,
    token,
    lastPort,
    fetchFn,
    cryptoImpl = globalThis.crypto,
    probeTimeoutMs,
    sendTimeoutMs = SEND_TIMEOUT_MS,
  }) {
    if (!token) return { outcome: { kind: "no-token" }, port: null, skipped: [] };
    const found = await findApp({ token, lastPort, fetchFn, cryptoImpl, timeoutMs: probeTimeoutMs });
    const { skipped } = found;
    if (found.port === null) {
      return { outcome: skipped.length ? { kind: "unproven", skipped } : { kind: "not-running" }, port: null, skipped };
    }
    let response;
    try {
      response = await fetchWithTimeout(fetchFn, scrapRequest(found.port, token, scrap), sendTimeoutMs);
    } catch (error) {
      // it proved itself a moment ago: it is still storing the page, or it quit
      const kind = error instanceof TimedOut ? "no-answer" : "not-running";
      return { outcome: { kind, skipped }, port: found.port, skipped };
    }
    const outcome = { ...answerOutcome(response.status, await readJson(response)), skipped };
    return { outcome, port: found.port, skipped };
  }

  /** "port 41730" or "ports 41730 and 41731". */
  function portList(skipped) {
    const ports = skipped.map((item) => String(item.port));
    if (ports.length === 1) return `port ${ports[0]}`;
    return `ports ${ports.slice(0, -1).join(", ")} and ${ports[ports.length - 1]}`;
  }

  /** A sentence naming the ports passed over, for a tooltip; "" when none was. */
  function skippedNote(skipped) {
    if (!skipped || skipped.length === 0) return "";
    return ` Passed over ${portList(skipped)}: ${skipped.length === 1 ? "it" : "they"} did not prove to hold the token, so nothing was sent there (see the extension's options).`;
  }

  const GREEN = "#2f6f5e";
  const GREY = "#5f6368";
  const RED = "#b3261e";
  const AMBER = "#a05a00";

  /** The badge text, its colour and the tooltip sentence for an outcome. */
  function badgeFor(outcome) {
    const note = skippedNote(outcome.skipped);
    switch (outcome.kind) {
      case "scrapped":
        return { text: "✓", color: GREEN, title: `Scrapped into SAN Desktop.${note}` };
      case "duplicate":
        return { text: "=", color: GREY, title: `Already in SAN Desktop: this was scrapped before.${note}` };
      case "not-running":
        return {
          text: "!",
          color: RED,
          title: `SAN Desktop is not running: nothing answered on ${HOST} ports ${FIRST_PORT}–${LAST_PORT}. Start it and try again.`,
        };
      case "no-answer":
        return {
          text: "!",
          color: RED,
          title: "SAN Desktop took the page but did not answer in time: look in its inbox before sending it again.",
        };
      case "unproven":
        return {
          text: "KEY",
          color: AMBER,
          title:
            `Nothing was sent: ${portList(outcome.skipped)} answered but did not prove to hold this token. ` +
            "If SAN Desktop is running, paste its current token from Settings into this extension's options; " +
            "if it is not, another program holds the port.",
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
        return { text: "×", color: RED, title: `SAN Desktop did not take it: ${outcome.detail}${note}` };
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
    newNonce,
    proofMessage,
    proofHolds,
    helloRequest,
    scrapRequest,
    pageScrap,
    selectionScrap,
    linkScrap,
    findApp,
    answerOutcome,
    sendScrap,
    portList,
    badgeFor,
  };
  if (typeof module === "object" && module.exports) module.exports = api;
  else root.SanCore = api;
})(globalThis);
