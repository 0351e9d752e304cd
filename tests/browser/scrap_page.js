// Drives Debian's chromium with the unpacked SAN Desktop extension, as a reader would use it: the token pasted
// into its options, a page opened, "Scrap this page" pressed. Prints the badge the extension shows afterwards, and
// the ports its options page lists as passed over (they did not prove to hold the token).
//   node scrap_page.js EXTENSION_DIR PAGE_URL TOKEN PROFILE_DIR [TEXT_TO_WAIT_FOR]
"use strict";

const { chromium } = require("playwright-core");

async function main() {
  const [extension, pageUrl, token, profile, waitFor] = process.argv.slice(2);
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: false, // (the new headless mode, below, is the one that loads extensions)
    args: [
      "--headless=new",
      `--disable-extensions-except=${extension}`,
      `--load-extension=${extension}`,
      "--no-sandbox", // (CI runs as root, where chromium's sandbox will not start)
    ],
  });
  try {
    const worker = context.serviceWorkers()[0] ?? (await context.waitForEvent("serviceworker", { timeout: 30000 }));
    await worker.evaluate((value) => chrome.storage.local.set({ token: value }), token); // the options page's work
    const page = await context.newPage();
    await page.goto(pageUrl);
    if (waitFor) await page.getByText(waitFor).first().waitFor({ timeout: 30000 }); // written by the page's script
    await page.bringToFront();
    // what the toolbar button (and its shortcut) runs: action.onClicked -> scrapPage(tab)
    const badge = await worker.evaluate(async (url) => {
      const [tab] = await chrome.tabs.query({ url });
      await scrapPage(tab);
      return {
        text: await chrome.action.getBadgeText({ tabId: tab.id }),
        title: await chrome.action.getTitle({ tabId: tab.id }),
      };
    }, pageUrl);
    // the options page, as the reader opens it from the extension's menu
    const options = await context.newPage();
    await options.goto(new URL("options.html", worker.url()).href);
    const skippedBox = options.locator("#skipped-box");
    const skipped = (await skippedBox.isVisible()) ? await options.locator("#skipped li").allTextContents() : [];
    console.log(JSON.stringify({ ...badge, skipped }));
  } finally {
    await context.close();
  }
}

main().catch((error) => {
  console.error(error.stack || String(error));
  process.exit(1);
});
