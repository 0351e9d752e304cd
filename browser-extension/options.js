// The options page: the token pasted from SAN Desktop's Settings, and a test that finds the app and tries it.
"use strict";

const ext = globalThis.browser ?? globalThis.chrome;
const core = globalThis.SanCore;

const tokenField = document.getElementById("token");
const result = document.getElementById("result");

function say(text, tone) {
  result.textContent = text;
  result.className = tone ?? "";
}

async function save() {
  const token = core.cleanToken(tokenField.value);
  tokenField.value = token;
  await ext.storage.local.set({ token });
  say(token ? "Saved." : "Saved without a token: SAN Desktop will refuse every scrap.", token ? "good" : "bad");
}

async function test(allowed) {
  const token = core.cleanToken(tokenField.value);
  if (!allowed) {
    say("This extension may not reach 127.0.0.1: allow it when the browser asks, then test again.", "bad");
    return;
  }
  say(`Looking for SAN Desktop on 127.0.0.1, ports ${core.FIRST_PORT}–${core.LAST_PORT}…`);
  const { lastPort = null } = await ext.storage.local.get("lastPort");
  const fetchFn = (url, init) => fetch(url, init);
  const found = await core.findApp({ token, lastPort, fetchFn });
  if (found === null) {
    say(
      `Nothing answered on 127.0.0.1, ports ${core.FIRST_PORT}–${core.LAST_PORT}: is SAN Desktop running?`,
      "bad",
    );
    return;
  }
  await ext.storage.local.set({ lastPort: found.port });
  if (found.status === 200) {
    const version = typeof found.body.version === "string" ? ` ${found.body.version}` : "";
    const saved = (await ext.storage.local.get("token")).token === token;
    say(
      `Found ${core.APP_NAME}${version} on port ${found.port}, and it accepts this token.` +
        (saved ? "" : " Press Save to keep it."),
      "good",
    );
  } else if (found.status === 401) {
    const why = found.body.error;
    say(
      token
        ? `Found ${core.APP_NAME} on port ${found.port}, but it refused this token: ${why}`
        : `Found ${core.APP_NAME} on port ${found.port}. Paste the token from its Settings, then test again.`,
      "bad",
    );
  } else {
    say(`Found ${core.APP_NAME} on port ${found.port}, but it refused the request: ${found.body.error}`, "bad");
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

ext.storage.local.get("token").then(({ token = "" }) => {
  tokenField.value = token;
});
