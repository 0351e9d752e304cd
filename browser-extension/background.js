// The toolbar button, its shortcut and the two context-menu entries: each reads what the reader chose, sends it to
// SAN Desktop on this computer and says on the button's badge how that went.
"use strict";

// Chromium runs this file alone as a service worker; Firefox runs it after core.js as an event page.
if (typeof importScripts === "function" && typeof SanCore === "undefined") importScripts("core.js");

const ext = globalThis.browser ?? globalThis.chrome;
const core = globalThis.SanCore;

const MENU_SELECTION = "san-scrap-selection";
const MENU_LINK = "san-scrap-link";

/** Runs in the page (serialised by scripting.executeScript), so it may use nothing from this file. */
function capturePage() {
  const selection = globalThis.getSelection ? String(globalThis.getSelection() ?? "") : "";
  return {
    url: location.href,
    title: document.title,
    // the DOM as rendered now, after the page's own scripts ran, not the HTML the server first sent
    html: document.documentElement.outerHTML,
    selection,
  };
}

/** Runs in the page: the selection with its line breaks, which the context menu's selectionText flattens. */
function captureSelection() {
  return globalThis.getSelection ? String(globalThis.getSelection() ?? "") : "";
}

async function showOutcome(tabId, outcome) {
  const badge = core.badgeFor(outcome);
  const target = tabId === undefined ? {} : { tabId };
  await ext.action.setBadgeText({ ...target, text: badge.text });
  await ext.action.setBadgeBackgroundColor({ ...target, color: badge.color });
  if (ext.action.setBadgeTextColor) await ext.action.setBadgeTextColor({ ...target, color: "#ffffff" });
  await ext.action.setTitle({ ...target, title: badge.title });
}

async function showWorking(tabId) {
  if (tabId === undefined) return;
  await ext.action.setBadgeText({ tabId, text: "…" });
  await ext.action.setTitle({ tabId, title: "Sending to SAN Desktop…" });
}

async function send(tabId, scrap) {
  await showWorking(tabId);
  const { token = "", lastPort = null } = await ext.storage.local.get(["token", "lastPort"]);
  const fetchFn = (url, init) => fetch(url, init);
  const { outcome, port, skipped } = await core.sendScrap({ scrap, token, lastPort, fetchFn, cryptoImpl: crypto });
  // the port that proved itself is asked first next time (and proves itself again); the ones passed over are
  // named on the options page
  await ext.storage.local.set({ skippedPorts: skipped, ...(port !== null ? { lastPort: port } : {}) });
  if (outcome.kind === "not-running" && !(await ext.permissions.contains({ origins: [core.HOST_PERMISSION] }))) {
    // Firefox can leave the host permission ungranted: then every request is blocked and looks like no app
    await showOutcome(tabId, {
      kind: "refused",
      detail: "this extension may not reach 127.0.0.1 yet; allow it on the extension's options page.",
    });
    return;
  }
  await showOutcome(tabId, outcome);
  if (outcome.kind === "no-token") await ext.runtime.openOptionsPage();
}

async function scrapPage(tab) {
  let captured;
  try {
    const [injection] = await ext.scripting.executeScript({ target: { tabId: tab.id }, func: capturePage });
    captured = injection?.result;
  } catch {
    captured = undefined;
  }
  if (!captured) {
    await showOutcome(tab.id, { kind: "unreadable" });
    return;
  }
  await send(tab.id, core.pageScrap(captured));
}

async function scrapSelection(info, tab) {
  let selection = info.selectionText ?? "";
  if (tab?.id !== undefined) {
    try {
      const [injection] = await ext.scripting.executeScript({
        target: { tabId: tab.id, frameIds: [info.frameId ?? 0] },
        func: captureSelection,
      });
      if (injection?.result) selection = injection.result;
    } catch {
      // a page extensions may not read (a PDF viewer, a browser page): the menu's flattened text still serves
    }
  }
  await send(tab?.id, core.selectionScrap(selection, info.frameUrl ?? info.pageUrl, tab?.title));
}

async function createMenus() {
  await ext.contextMenus.removeAll();
  ext.contextMenus.create({ id: MENU_SELECTION, title: "Scrap selection", contexts: ["selection"] });
  ext.contextMenus.create({ id: MENU_LINK, title: "Scrap link", contexts: ["link"] });
}

// Browsers keep registered menus across restarts of the background; made again at browser start all the same,
// in case one does not (remade, not added, so never twice).
ext.runtime.onInstalled.addListener(createMenus);
ext.runtime.onStartup.addListener(createMenus);

// The toolbar button and its shortcut (the _execute_action command) both land here.
ext.action.onClicked.addListener((tab) => scrapPage(tab));

ext.contextMenus.onClicked.addListener((info, tab) => {
  // Firefox gives the link's text; Chromium does not, so there the title is the address
  if (info.menuItemId === MENU_LINK) return send(tab?.id, core.linkScrap(info.linkUrl, info.linkText));
  if (info.menuItemId === MENU_SELECTION) return scrapSelection(info, tab);
  return undefined;
});

// A badge speaks of the page it was set on: a new page in the tab starts without one.
ext.tabs.onUpdated.addListener((tabId, changeInfo) => {
  if (changeInfo.status === "loading") {
    ext.action.setBadgeText({ tabId, text: "" });
    ext.action.setTitle({ tabId, title: ext.runtime.getManifest().action.default_title });
  }
});
