// What the console's browser tests check on every page: no page error, no console error but the
// failed loads a step expects, no Content-Security-Policy violation, and axe-core finding nothing
// serious or critical; and a screenshot of it in test-artifacts/console/.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { BrowserContext, Page } from 'playwright-core';

const require = createRequire(import.meta.url);
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export const SCREENSHOTS_DIR = new URL('../../test-artifacts/console/', import.meta.url);

/** A failed load the page is expected to cause: its method, path and status. */
export interface ExpectedFailure {
  status: number;
  path: RegExp;
}

export interface WatchedPage {
  page: Page;
  /** Problems seen so far: page errors, unexpected console errors, CSP violations. */
  problems: string[];
  /** Failed loads the next steps may cause without it being a problem. */
  expect(failure: ExpectedFailure): void;
}

/**
 * A page of the context, watched: CSP violations are collected by a listener added before any of
 * the page's own scripts (through the DevTools protocol, which the page's CSP does not govern).
 */
export async function watchPage(context: BrowserContext): Promise<WatchedPage> {
  await context.addInitScript({
    content: `document.addEventListener('securitypolicyviolation', (event) => {
      console.error('CSP violation: ' + event.violatedDirective + ' blocked ' + event.blockedURI);
    });`,
  });
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  const problems: string[] = [];
  const expected: ExpectedFailure[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    // Chromium reports every non-2xx answer to fetch as a console error naming the resource.
    const url = message.location().url;
    const status = Number(/status of (\d{3})/.exec(message.text())?.[1]);
    if (url && status && expected.some((e) => e.status === status && e.path.test(new URL(url).pathname))) return;
    problems.push(`console error: ${message.text()} (${url})`);
  });
  return { page, problems, expect: (failure) => expected.push(failure) };
}

/** axe-core in the page (evaluated, not injected: the CSP allows no inline script): no serious or critical violation. */
export async function assertAccessible(page: Page, name: string): Promise<void> {
  // Strings, not functions: this file is type-checked without the DOM's types.
  if (!(await page.evaluate('"axe" in window'))) await page.evaluate(AXE_SOURCE);
  const violations = (await page.evaluate('axe.run(document, { resultTypes: ["violations"] }).then((result) => result.violations)')) as {
    id: string;
    impact: string;
    help: string;
    nodes: { target: string[] }[];
  }[];
  const grave = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(
    grave.map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`),
    [],
    `axe-core on ${name}`,
  );
}

/** Checks the page as it stands (accessibility, nothing gone wrong) and saves its screenshot. */
export async function checkPage(watched: WatchedPage, name: string): Promise<void> {
  await assertAccessible(watched.page, name);
  assert.deepEqual(watched.problems, [], `no errors on ${name}`);
  mkdirSync(SCREENSHOTS_DIR, { recursive: true });
  await watched.page.screenshot({ path: new URL(`${name}.png`, SCREENSHOTS_DIR).pathname, fullPage: true });
}
