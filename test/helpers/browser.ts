// Debian's chromium driven by playwright-core, for the tests that need a real browser. Without
// Chromium those tests are skipped with the reason printed, except under CI=true, where that fails.
import assert from 'node:assert/strict';
import { accessSync, constants } from 'node:fs';
import { test } from 'node:test';
import { chromium, type Browser } from 'playwright-core';

const CHROMIUM = process.env.ORDERPAY_CHROMIUM || '/usr/bin/chromium';
// Without the background-networking flags Chromium keeps dialling Google's hosts, which the
// machines this runs on refuse; --no-sandbox because CI runs as root.
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

function findMissingChromium(): string | undefined {
  try {
    accessSync(CHROMIUM, constants.X_OK);
    return undefined;
  } catch {
    return `no Chromium executable at ${CHROMIUM} (install Debian's chromium: \`sudo apt-get install chromium\`, or set ORDERPAY_CHROMIUM)`;
  }
}

/** Declares suite when Chromium is there; otherwise one test titled title, skipped with the reason (failed under CI=true). */
export function withChromium(title: string, suite: () => void): void {
  const missing = findMissingChromium();
  if (missing && process.env.CI === 'true') {
    test('browser tests need Chromium (CI=true)', () => {
      assert.fail(`${missing}; CI=true makes this a failure — .ci/run installs it when running as root`);
    });
  } else if (missing) {
    // A skipped test (not a skipped suite) so the run's summary counts it and prints the reason.
    test(title, { skip: missing }, () => {});
  } else {
    suite();
  }
}
