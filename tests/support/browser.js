// What the browser tests (serve_page.js, parity_page.js) share: headless Debian chromium driven by
// puppeteer-core from the installed peers, with nothing leaving the machine, and a click that survives
// a list re-rendering under it.
"use strict";
const puppeteer = require(process.env.AGORA_PEERS + "/node_modules/puppeteer-core");

// Nothing may leave the machine: no background services, updates or proxies of the browser's own.
const args = ["--no-sandbox", "--headless=new", "--no-first-run", "--no-default-browser-check",
  "--disable-background-networking", "--disable-component-update", "--disable-default-apps", "--disable-sync",
  "--disable-domain-reliability", "--disable-client-side-phishing-detection", "--metrics-recording-only",
  "--disable-breakpad", "--disable-extensions", "--no-pings", "--no-proxy-server", "--safebrowsing-disable-auto-update",
  "--disable-features=Translate,OptimizationHints,MediaRouter,AutofillServerCommunication,CertificateTransparencyComponentUpdater",
  "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"];

// The browser, launched with those arguments.
function launch() { return puppeteer.launch({ executablePath: "/usr/bin/chromium", args, headless: true }); }

// Clicks the element sel names as it is at that moment, inside the page: lists re-render as events
// arrive, and puppeteer's page.click on a handle that was replaced in between fails with "Node is
// detached from document" (seen once under ASan, where the server is slower).
async function clickNow(page, sel, T) {
  await page.waitForSelector(sel, T);
  await page.waitForFunction((s) => { const el = document.querySelector(s); if (!el) return false; el.click(); return true; }, T, sel);
}

// A page run's end: a request that left the server, or an uncaught page error, fails it.
function assertClean(errors, offsite) {
  if (offsite.length) throw new Error("requests off the server: " + offsite.join(", "));
  if (errors.length) throw new Error(errors.length + " page error(s): " + errors.join(" | "));
}

module.exports = { launch, clickNow, assertClean };
