// Debian's chromium driven by playwright-core, for the tests that need a real browser. Without
// Chromium those tests are skipped with the reason printed, except under CI=true, where that fails.
import { accessSync, constants } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { withMachineTool } from './machine-tools.ts';

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
  const tool = {
    need: 'browser tests need Chromium',
    missing: findMissingChromium(),
    provision: '.ci/run installs it when running as root',
  };
  withMachineTool(tool, title, suite);
}
