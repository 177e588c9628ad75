// Entity tags, pure parts: every resource tags with a kind of its own, so a tag of one resource
// never matches another's with the same id, row version and API version.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ETAG_KINDS, entityTag, noneMatch, type TaggedResource } from '../../src/http/etag.ts';

const RESOURCES = Object.keys(ETAG_KINDS) as TaggedResource[];

describe('entity tag kinds', () => {
  test('each resource has its own kind, of letters only (the id that follows is digits)', () => {
    const kinds = Object.values(ETAG_KINDS);
    assert.equal(new Set(kinds).size, kinds.length, `kinds repeat: ${kinds.join(', ')}`);
    for (const kind of kinds) assert.match(kind, /^[a-z]+$/);
  });

  test('the tags of every resource are the kind, id, row version and API version', () => {
    assert.deepEqual(
      RESOURCES.map((resource) => entityTag(resource, 1, 1, 1)),
      ['"o1.1.v1"', '"pr1.1.v1"', '"pa1.1.v1"', '"re1.1.v1"', '"we1.1.v1"'],
    );
  });

  test('no two resources share a tag, nor match each other in If-None-Match, for the same numbers', () => {
    for (const [id, version] of [
      [1, 1],
      [12, 3],
      [1, 23],
    ] as const) {
      const tags = RESOURCES.map((resource) => entityTag(resource, id, version, 1));
      assert.equal(new Set(tags).size, tags.length, tags.join(' '));
      for (const [i, tag] of tags.entries()) {
        for (const [j, other] of tags.entries()) assert.equal(noneMatch(other, tag), i === j, `${other} against ${tag}`);
      }
    }
  });
});
