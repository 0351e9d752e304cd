// The options page: the token pasted from SAN Desktop's Settings, a test that finds the app by its proof, and the
// ports passed over because they did not prove to hold the token (nothing is ever sent to those).
"use strict";

const ext = globalThis.browser ?? globalThis.chrome;
const core = globalThis.SanCore;

const tokenField = document.getElementById("token");
const result = document.getElementById("result");
const skippedList = document.getElementById("skipped");
const skippedBox = document.getElementById("skipped-box");

function say(text, tone) {
  result.textContent = text;
  result.className = tone ?? "";
}

/** Lists the ports passed over (by the last scrap or test), each with what it did; hidden when there are none. */
function showSkipped(skipped) {
  skippedList.replaceChildren(
    ...(skipped ?? []).map(({ port, reason }) => {
      const item = document.createElement("li");
      item.textContent = `Port ${port}: ${reason}. Nothing was sent to it.`;
      return item;
    }),
  );
  skippedBox.hidden = !skipped || skipped.length === 0;
}

async function save() {
  const token = core.cleanToken(tokenField.value);
  tokenField.value = token;
  await ext.storage.local.set({ token });
  say(token ? "Saved." : "Saved without a token: nothing will be sent to SAN Desktop.", token ? "good" : "bad");
}

async function test(allowed) {
  const token = core.cleanToken(tokenField.value);
  if (!allowed) {
    say("This extension may not reach 127.0.0.1: allow it when the browser asks, then test again.", "bad");
    return;
  }
  if (!token) {
    say("Paste the token from SAN Desktop's Settings first: without it no port can prove it is SAN Desktop.", "bad");
    return;
  }
  say(`Looking for SAN Desktop on 127.0.0.1, ports ${core.FIRST_PORT}–${core.LAST_PORT}…`);
  const { lastPort = null } = await ext.storage.local.get("lastPort");
  const fetchFn = (url, init) => fetch(url, init);
  const found = await core.findApp({ token, lastPort, fetchFn, cryptoImpl: crypto });
  await ext.storage.local.set({ skippedPorts: found.skipped, ...(found.port !== null ? { lastPort: found.port } : {}) });
  showSkipped(found.skipped);
  if (found.port !== null) {
    const version = typeof found.body.version === "string" ? ` ${found.body.version}` : "";
    const saved = (await ext.storage.local.get("token")).token === token;
    say(
      `Found ${core.APP_NAME}${version} on port ${found.port}: it proved that it holds this token.` +
        (saved ? "" : " Press Save to keep it."),
      "good",
    );
  } else if (found.skipped.length > 0) {
    say(
      `No port proved that it holds this token, so nothing was sent (${core.portList(found.skipped)} answered: see ` +
        "below). If SAN Desktop is running, paste its current token from Settings and test again; if it is not, " +
        "another program holds the port. A SAN Desktop older than this extension cannot prove it: update it.",
      "bad",
    );
  } else {
    say(`Nothing answered on 127.0.0.1, ports ${core.FIRST_PORT}–${core.LAST_PORT}: is SAN Desktop running?`, "bad");
  }
}

document.getElementById("save").addEventListener("click", () => save());
document.getElementById("test").addEventListener("click", () => {
  // Asked for here, inside the click, because Firefox grants a permission only during a user action; where it is
  // already granted (Chromium grants it at install) this resolves at once without asking.
  const origins = { origins: [core.HOST_PERMISSION] };
  ext.permissions.request(origins).then(test, () => ext.permissions.contains(origins).then(test));
});
document.getElementById("show").addEventListener("click", (event) => {
  const hidden = tokenField.type === "password";
  tokenField.type = hidden ? "text" : "password";
  event.target.textContent = hidden ? "Hide token" : "Show token";
});

ext.storage.local.get(["token", "skippedPorts"]).then(({ token = "", skippedPorts = [] }) => {
  tokenField.value = token;
  showSkipped(skippedPorts);
});
// a scrap made while the page is open may pass over a port: shown as it happens
ext.storage.onChanged.addListener((changes, area) => {
  if (area === "local" && changes.skippedPorts) showSkipped(changes.skippedPorts.newValue);
});
