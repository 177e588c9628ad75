// Entity tags (RFC 9110 §8.8.3) and the conditional requests that use them (§13.1).
import { DomainError } from '../core/errors.ts';
import type { Precondition } from '../core/precondition.ts';

/**
 * Every resource that carries entity tags, and the letters its tags start with. Kept in this one
 * place so that no two resources share a kind: a tag is the kind's letters, then the id's digits,
 * so distinct kinds can never spell the same tag.
 */
export const ETAG_KINDS = { order: 'o', product: 'pr', payment: 'pa', refund: 're', webhookEndpoint: 'we' } as const;
export type TaggedResource = keyof typeof ETAG_KINDS;

/** A strong tag for one representation: resource kind, id, row version and API version. */
export function entityTag(resource: TaggedResource, id: number, version: number, apiVersion: number): string {
  return `"${ETAG_KINDS[resource]}${id}.${version}.v${apiVersion}"`;
}

const ENTITY_TAG = String.raw`(?:W/)?"[\x21\x23-\x7e\x80-\xff]*"`;
/**
 * If-Match and If-None-Match: "*" or a list of entity tags (RFC 9110 §13.1.1–2). A list may have
 * empty elements anywhere, which recipients must accept and ignore (§5.6.1.2), or none at all: an
 * empty header is the empty list, which matches nothing. The pattern the OpenAPI documents give;
 * each run of separators has one way to match, so a long header costs linear time, not quadratic.
 */
export const ENTITY_TAGS_PATTERN = String.raw`^\s*\*\s*$|^[\s,]*(?:${ENTITY_TAG}(?:\s*,[\s,]*${ENTITY_TAG})*[\s,]*)?$`;
const TAG_LIST = new RegExp(ENTITY_TAGS_PATTERN);

function parseTagList(header: string, name: string): string[] {
  if (!TAG_LIST.test(header)) {
    throw new DomainError('REQUEST_HEADER_INVALID', `${name} must be "*" or a list of entity tags.`, {
      errors: [{ parameter: name, detail: `${name} must be "*" or a comma-separated list of quoted entity tags` }],
    });
  }
  return header
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
}

/** If-None-Match uses the weak comparison (§13.1.2): W/ prefixes are ignored. */
export function noneMatch(header: string | undefined, current: string): boolean {
  if (header === undefined) return false;
  // A client revalidating sends back the one tag it was given: the common case needs no parsing.
  if (header === current) return true;
  const strip = (tag: string) => tag.replace(/^W\//, '');
  return parseTagList(header, 'If-None-Match').some((tag) => tag === '*' || strip(tag) === strip(current));
}

/**
 * If-Match uses the strong comparison (§13.1.1): a weak tag never matches. current is undefined
 * when the resource has no current representation, which makes every If-Match fail.
 */
export function checkIfMatch(header: string | undefined, current: string | undefined): void {
  if (header === undefined) return;
  const tags = parseTagList(header, 'If-Match');
  const matches = current !== undefined && tags.some((tag) => tag === '*' || (!tag.startsWith('W/') && tag === current));
  if (!matches) {
    throw new DomainError('REQUEST_PRECONDITION_FAILED', 'If-Match does not match the current entity tag; read the resource again.', {
      extensions: current ? { currentEtag: current } : {},
    });
  }
}

/**
 * The If-Match precondition a service judges once it holds the resource: etagOf spells the tag
 * of its current state in the representation the request asked for. Undefined without If-Match.
 */
export function ifMatchPrecondition<T>(header: string | undefined, etagOf: (current: T) => string): Precondition<T> | undefined {
  if (header === undefined) return undefined;
  return (current) => checkIfMatch(header, current === undefined ? undefined : etagOf(current));
}
