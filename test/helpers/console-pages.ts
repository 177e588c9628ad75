// What the console's browser tests check on every page: no page error, no console error but the
// failed loads a step expects, no Content-Security-Policy violation, and axe-core finding nothing
// serious or critical; and a screenshot of it in test-artifacts/console/.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { BrowserContext, Page, Request } from 'playwright-core';

const require = createRequire(import.meta.url);
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export const SCREENSHOTS_DIR = new URL('../../test-artifacts/console/', import.meta.url);

/** A failed load the page is expected to cause: its path, and its status or the network error Chromium names. */
export interface ExpectedFailure {
  status: number | `ERR_${string}`;
  path: RegExp;
}

export interface WatchedPage {
  page: Page;
  /** Every request of the page's context so far, in the order sent. */
  requests: Request[];
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
  const requests: Request[] = [];
  context.on('request', (request) => requests.push(request));
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  const problems: string[] = [];
  const expected: ExpectedFailure[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    // Chromium reports every non-2xx answer to fetch, and every fetch with no answer (net::ERR_…),
    // as a console error naming the resource.
    const url = message.location().url;
    const status = Number(/status of (\d{3})/.exec(message.text())?.[1]) || /net::(ERR_\w+)/.exec(message.text())?.[1];
    if (url && status && expected.some((e) => e.status === status && e.path.test(new URL(url).pathname))) return;
    problems.push(`console error: ${message.text()} (${url})`);
  });
  return { page, requests, problems, expect: (failure) => expected.push(failure) };
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

/** Through the console's sign-in page, orderpay's login and consent pages, and back to the console. */
export async function signInToConsole(
  watched: WatchedPage,
  origin: string,
  email: string,
  password: string,
  screenshots = false,
): Promise<void> {
  const { page } = watched;
  await page.goto(`${origin}/console/`);
  await page.getByRole('heading', { name: 'Sign in to the orderpay console' }).waitFor();
  if (screenshots) await checkPage(watched, 'sign-in');
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: 'Sign in to continue to the orderpay staff console' }).waitFor();
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('button', { name: 'Allow', exact: true }).click();
}

/** The API (v3) as a test client beside the console, with a bearer token: the body and the response; anything but 2xx fails. */
export function apiClient(origin: string, defaultToken: string) {
  return async function call<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}, token = defaultToken) {
    const response = await fetch(`${origin}/v3${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    assert.ok(response.ok, `${method} ${path}: ${response.status} ${text}`);
    return { body: (text ? JSON.parse(text) : undefined) as T, response };
  };
}
