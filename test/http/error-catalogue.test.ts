// The error catalogue (src/core/errors.ts) against docs/errors.md, the OpenAPI Problem component
// and the problem type pages: one catalogue, documented by hand, kept in step here.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { ERRORS, problemSlug, type ErrorCode } from '../../src/core/errors.ts';
import { PUBLIC_URL, startTestApp, type TestApp } from '../helpers/app.ts';
import { openApiDocument } from '../helpers/openapi.ts';

const CODE = /^[A-Z]+(_[A-Z]+)+$/;
const DOMAINS = [
  'EVENT',
  'WEBHOOK',
  'REQUEST',
  'ROUTE',
  'METHOD',
  'VERSION',
  'QUERY',
  'AUTH',
  'ORDER',
  'PRODUCT',
  'USER',
  'IDEMPOTENCY',
  'PAYMENT',
  'RATE',
  'RESOURCE',
  'SERVICE',
  'INTERNAL',
];
const CODES = Object.keys(ERRORS) as ErrorCode[];

interface DocumentedCode {
  status: string | undefined;
  title: string | undefined;
  type: string | undefined;
  description: string;
}

/** The lines between a heading and the next heading of the same or a higher level. */
function section(markdown: string, heading: string): string {
  const lines = markdown.split('\n');
  const start = lines.indexOf(heading);
  assert.notEqual(start, -1, `docs/errors.md has no "${heading}"`);
  const level = heading.indexOf(' ');
  const end = lines.findIndex((line, i) => i > start && /^#+ /.test(line) && line.indexOf(' ') <= level);
  return lines.slice(start + 1, end === -1 ? undefined : end).join('\n');
}

/** The "### CODE" sections of the catalogue: their bullets and their prose. */
function documentedCodes(catalogue: string): Map<string, DocumentedCode> {
  const codes = new Map<string, DocumentedCode>();
  for (const part of catalogue.split(/^### /m).slice(1)) {
    const [heading = '', ...body] = part.split('\n');
    assert.ok(!codes.has(heading), `${heading} is documented twice`);
    const bullet = (name: string) => body.map((line) => new RegExp(`^- \\*\\*${name}:\\*\\* (.+)$`).exec(line)?.[1]).find(Boolean);
    const prose = body.filter((line) => line.trim() !== '' && !line.startsWith('- **')).join(' ');
    codes.set(heading.trim(), {
      status: bullet('Status'),
      title: bullet('Title'),
      type: bullet('Type'),
      description: prose.replace(/\s+/g, ' ').trim(),
    });
  }
  return codes;
}

describe('error catalogue', () => {
  let markdown: string;
  let catalogue: string;

  before(async () => {
    markdown = await readFile(new URL('../../docs/errors.md', import.meta.url), 'utf8');
    catalogue = section(markdown, '## Catalogue');
  });

  it('names every code DOMAIN_REASON, with a known domain prefix', () => {
    for (const code of CODES) {
      assert.match(code, CODE);
      assert.ok(DOMAINS.includes(code.split('_')[0]!), `${code} has an unknown domain prefix`);
    }
  });

  it('gives every code a 4xx or 5xx status, a title and a description', () => {
    for (const code of CODES) {
      const { status, title, description } = ERRORS[code];
      assert.ok(Number.isInteger(status) && status >= 400 && status <= 599, `${code}: ${status}`);
      assert.ok(title.length > 0 && title.trim() === title, `${code} title`);
      assert.ok(description.length > 0 && /[.)]$/.test(description), `${code} description is a sentence`);
    }
  });

  it('gives every code its own problem type slug', () => {
    const slugs = CODES.map(problemSlug);
    assert.equal(new Set(slugs).size, slugs.length);
    for (const slug of slugs) assert.match(slug, /^[a-z]+(-[a-z]+)+$/);
  });

  it('docs/errors.md documents every code with the same status, title, type and description', () => {
    const documented = documentedCodes(catalogue);
    for (const code of CODES) {
      const entry = documented.get(code);
      assert.ok(entry, `docs/errors.md has no section "### ${code}"`);
      assert.equal(entry.status, String(ERRORS[code].status), `${code} status`);
      assert.equal(entry.title, ERRORS[code].title, `${code} title`);
      assert.equal(entry.type, `\`{PUBLIC_URL}/problems/${problemSlug(code)}\``, `${code} type`);
      assert.equal(entry.description, ERRORS[code].description, `${code} description`);
    }
  });

  it('docs/errors.md documents no code that is not in the catalogue', () => {
    const documented = [...documentedCodes(catalogue).keys()];
    assert.deepEqual(
      documented.filter((code) => !(code in ERRORS)),
      [],
    );
    // Headings and code spans anywhere on the page that look like a code of one of our domains.
    const mentioned = [...markdown.matchAll(/^#+ ([A-Z_]+)$|`([A-Z]+(?:_[A-Z]+)+)`/gm)]
      .map((m) => m[1] ?? m[2]!)
      .filter((token) => CODE.test(token) && DOMAINS.includes(token.split('_')[0]!));
    assert.ok(mentioned.length >= CODES.length);
    assert.deepEqual([...new Set(mentioned.filter((token) => !(token in ERRORS)))], []);
  });

  it('the summary table of docs/errors.md lists every code with its status and title', () => {
    const rows = [...catalogue.matchAll(/^\| \[`([A-Z_]+)`\]\(#([a-z_]+)\) \| (\d{3}) \| (.+) \|$/gm)];
    assert.deepEqual(
      rows.map((r) => r[1]),
      CODES,
    );
    for (const [, code, anchor, status, title] of rows) {
      assert.equal(anchor, code!.toLowerCase());
      assert.equal(status, String(ERRORS[code as ErrorCode].status));
      assert.equal(title, ERRORS[code as ErrorCode].title);
    }
  });
});

describe('problem bodies, their types and the OpenAPI Problem component', () => {
  let t: TestApp;

  before(async () => {
    t = await startTestApp();
  });

  after(async () => {
    await t.close();
  });

  it('the OpenAPI document has the Problem component, with every member docs/errors.md describes', async () => {
    const problem = openApiDocument(t.app).components.schemas?.Problem as
      | { properties: Record<string, unknown>; required: string[] }
      | undefined;
    assert.ok(problem, 'components.schemas.Problem');
    const markdown = await readFile(new URL('../../docs/errors.md', import.meta.url), 'utf8');
    const members = [...section(markdown, '## The problem body').matchAll(/^\| `([a-zA-Z]+)` \| (yes|no) \|/gm)];
    assert.deepEqual(members.map((m) => m[1]).sort(), Object.keys(problem.properties).sort());
    assert.deepEqual(
      members
        .filter((m) => m[2] === 'yes')
        .map((m) => m[1])
        .sort(),
      [...problem.required].sort(),
    );
  });

  it('a problem names its type as PUBLIC_URL/problems/<slug>', async () => {
    const response = await t.request(undefined, { method: 'GET', url: '/no-such-thing?x=1' });
    assert.equal(response.statusCode, 404);
    assert.match(String(response.headers['content-type']), /^application\/problem\+json\b/);
    assert.equal(response.headers['cache-control'], 'no-store');
    const body = response.json();
    assert.deepEqual(body, {
      type: `${PUBLIC_URL}/problems/route-not-found`,
      title: ERRORS.ROUTE_NOT_FOUND.title,
      status: 404,
      detail: 'No resource at /no-such-thing.',
      instance: '/no-such-thing',
      code: 'ROUTE_NOT_FOUND',
      requestId: response.headers['x-request-id'],
    });
  });

  it('serves the page of every problem type as HTML with its title, status and description', async () => {
    const escapeHtml = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
    for (const code of CODES) {
      const response = await t.app.inject({ method: 'GET', url: `/problems/${problemSlug(code)}` });
      assert.equal(response.statusCode, 200, code);
      assert.equal(response.headers['content-type'], 'text/html; charset=utf-8');
      assert.equal(response.headers['cache-control'], 'public, max-age=86400');
      for (const text of [ERRORS[code].title, code, `HTTP ${ERRORS[code].status}`, ERRORS[code].description]) {
        assert.ok(response.body.includes(escapeHtml(text)), `${code} page lacks ${text}`);
      }
    }
    const unknown = await t.app.inject({ method: 'GET', url: '/problems/no-such-problem' });
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json().code, 'ROUTE_NOT_FOUND');
  });
});
