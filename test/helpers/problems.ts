// The RFC 9457 problem response as every endpoint must send it: the whole contract in one check.
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { ERRORS, type ErrorCode } from '../../src/core/errors.ts';
import { PUBLIC_URL } from './app.ts';

export const PROBLEM_JSON = 'application/problem+json; charset=utf-8';

/**
 * Asserts the status, the problem media type, Cache-Control: no-store, none of the headers only a
 * success carries (ETag, paging Links, Location; a deprecated version's Link to its migration guide
 * is on every response of that version), and the whole body: the type URI under PUBLIC_URL, the
 * catalogue title, the request id of the X-Request-Id header, and any extension members in extra.
 */
export function expectProblem(
  res: LightMyRequestResponse,
  status: number,
  code: ErrorCode,
  instance: string,
  detail: string,
  extra: Record<string, unknown> = {},
): void {
  assert.equal(res.statusCode, status, res.body);
  assert.equal(res.headers['content-type'], PROBLEM_JSON);
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.equal(res.headers.etag, undefined);
  const link = res.headers.link;
  if (link !== undefined) assert.match(String(link), /^<[^>,]+\/docs\/migrating-to-v\d+>; rel="deprecation"; type="text\/markdown"$/);
  assert.equal(res.headers.location, undefined);
  assert.deepEqual(res.json(), {
    type: `${PUBLIC_URL}/problems/${code.toLowerCase().replaceAll('_', '-')}`,
    title: ERRORS[code].title,
    status,
    detail,
    instance,
    code,
    requestId: res.headers['x-request-id'],
    ...extra,
  });
}

/**
 * The paging relations of a response's Link header: a deprecated version's responses also link
 * their migration guide (rel="deprecation"), which paging assertions leave out.
 */
export function pagingLinks(res: LightMyRequestResponse): string | undefined {
  const link = res.headers.link;
  if (link === undefined) return undefined;
  const paging = String(link)
    .split(/,\s*(?=<)/)
    .filter((l) => !l.includes('rel="deprecation"'))
    .join(', ');
  return paging === '' ? undefined : paging;
}
