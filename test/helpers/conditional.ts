// The answers of a conditional GET (RFC 9110 §13.1.2): the tagged representation, and the 304 that
// replaces it when If-None-Match matches, with the headers the 200 would have carried and no body.
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';

export const JSON_TYPE = 'application/json; charset=utf-8';

/** 200 with this body, its ETag, Cache-Control and Vary: Accept. */
export function expectTagged(
  res: LightMyRequestResponse,
  expected: { etag: string; cacheControl: string; body: unknown; contentType?: string },
): void {
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.headers['content-type'], expected.contentType ?? JSON_TYPE);
  assert.equal(res.headers['cache-control'], expected.cacheControl);
  assert.equal(res.headers.vary, 'Accept');
  assert.equal(res.headers.etag, expected.etag);
  assert.deepEqual(res.json(), expected.body);
}

/** The check of a 304 whose 200 carries this Cache-Control: no body, the ETag, Cache-Control, Vary. */
export function notModifiedCheck(cacheControl: string): (res: LightMyRequestResponse, etag: string) => void {
  return function expectNotModified(res, etag) {
    assert.equal(res.statusCode, 304, res.body);
    assert.equal(res.body, '');
    assert.equal(res.headers.etag, etag);
    assert.equal(res.headers['cache-control'], cacheControl);
    assert.equal(res.headers.vary, 'Accept');
    assert.equal(res.headers['content-type'], undefined);
    assert.ok(res.headers['content-length'] === undefined || res.headers['content-length'] === '0');
    // Only what updates a stored response (RFC 9110 §15.4.5): no content, so nothing against sniffing or framing it.
    for (const header of ['content-security-policy', 'x-frame-options', 'x-content-type-options'])
      assert.equal(res.headers[header], undefined, header);
  };
}
