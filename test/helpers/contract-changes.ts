// The changes between two OpenAPI 3.1 documents that break a client, as lines a developer can act on.
// api-smart-diff finds and classifies the differences; around it (docs/decisions/0053-v1-contract-frozen.md), references
// it would not follow are inlined first, and four of its classifications are corrected.
import { apiCompare, type Diff } from 'api-smart-diff';

type JsonObject = Record<string, unknown>;
/** An OpenAPI document as parsed JSON. */
type OpenApiJson = JsonObject;

const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The target of a local reference (`#/components/schemas/Order`, RFC 6901 tokens). */
function referenced(document: OpenApiJson, ref: string): unknown {
  return ref
    .slice(2)
    .split('/')
    .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce<unknown>((node, token) => (isObject(node) ? node[token] : undefined), document);
}

/**
 * `document` with each local `#/...` reference replaced by a copy of its target, except where
 * `other` holds the same reference at the same place. api-smart-diff resolves a reference only
 * when both sides hold the same one there: a schema moved between inline and components would
 * otherwise hide what changed inside it. Keeping the paired references keeps the comparison fast
 * (the Problem schema alone is referenced by a hundred responses). A reference back into its own
 * ancestors is kept.
 */
function inlineUnpairedReferences(document: OpenApiJson, other: OpenApiJson): OpenApiJson {
  const counterpartOf = (node: unknown): unknown => (isObject(node) && typeof node.$ref === 'string' ? referenced(other, node.$ref) : node);
  const inline = (node: unknown, counterpart: unknown, resolving: readonly string[]): unknown => {
    if (Array.isArray(node)) return node.map((item, i) => inline(item, Array.isArray(counterpart) ? counterpart[i] : undefined, resolving));
    if (!isObject(node)) return node;
    const { $ref, ...siblings } = node;
    if (typeof $ref === 'string' && $ref.startsWith('#/') && !resolving.includes($ref)) {
      if (isObject(counterpart) && counterpart.$ref === $ref) return node;
      const resolved = inline(referenced(document, $ref), counterpartOf(counterpart), [...resolving, $ref]) as JsonObject;
      // OpenAPI 3.1 allows siblings of $ref; they apply beside the target's keywords.
      return { ...resolved, ...(inline(siblings, counterpart, resolving) as JsonObject) };
    }
    const pair = counterpartOf(counterpart);
    return Object.fromEntries(
      Object.entries(node).map(([key, value]) => [key, inline(value, isObject(pair) ? pair[key] : undefined, resolving)]),
    );
  };
  return inline(document, other, []) as OpenApiJson;
}

/** The value at a path of the document, following references on the way. */
function valueAt(document: OpenApiJson, path: readonly (string | number)[]): unknown {
  const follow = (node: unknown): unknown => (isObject(node) && typeof node.$ref === 'string' ? referenced(document, node.$ref) : node);
  return path.reduce<unknown>((node, key) => {
    const followed = follow(node);
    return isObject(followed) || Array.isArray(followed) ? (followed as Record<string | number, unknown>)[key] : undefined;
  }, document);
}

// api-smart-diff derives its response rules by swapping breaking and non-breaking in its request
// rules; for these keywords a replaced value breaks clients on either side of the wire.
const REPLACE_BREAKS_BOTH_WAYS = new Set(['type', 'format', 'pattern', 'const']);

const INT32 = 2 ** 31;

/**
 * A width named for an integer that changes nothing a client must send or can receive: int64
 * holds every JSON integer, and int32 every one the schema's existing minimum and maximum keep
 * within ±2³¹ (the server's validator takes both as annotations: src/http/validation.ts).
 */
function isIntegerWidthAnnotation(diff: Diff, before: OpenApiJson): boolean {
  if (diff.action !== 'add' || diff.path.at(-1) !== 'format') return false;
  const schema = valueAt(before, diff.path.slice(0, -1));
  if (!isObject(schema) || schema.type !== 'integer') return false;
  if (diff.after === 'int64') return true;
  const { minimum, maximum } = schema;
  return diff.after === 'int32' && typeof minimum === 'number' && typeof maximum === 'number' && minimum >= -INT32 && maximum < INT32;
}

/**
 * A security scheme added to components: api-smart-diff calls it breaking, yet what a client must
 * send is in the security requirements, which it classifies where they are (a requirement added
 * as an alternative is not breaking, one replaced is). A scheme nothing requires breaks no one.
 */
const isSecuritySchemeAdded = (diff: Diff): boolean =>
  diff.action === 'add' && diff.path.length === 3 && diff.path[0] === 'components' && diff.path[1] === 'securitySchemes';

function isBreaking(diff: Diff, before: OpenApiJson): boolean {
  if (isIntegerWidthAnnotation(diff, before) || isSecuritySchemeAdded(diff)) return false;
  if (diff.type === 'breaking') return true;
  const key = diff.path.at(-1);
  const parentKey = diff.path.at(-2);
  if (diff.action === 'replace' && typeof key === 'string' && REPLACE_BREAKS_BOTH_WAYS.has(key) && parentKey !== 'properties') return true;
  // A field removed from a request body that refuses unknown fields (`additionalProperties:
  // false`, docs/api.md) turns every request still sending it into a 400.
  if (diff.action === 'remove' && parentKey === 'properties' && diff.path.includes('requestBody')) {
    return valueAt(before, [...diff.path.slice(0, -2), 'additionalProperties']) === false;
  }
  return false;
}

const show = (value: unknown): string => JSON.stringify(value);
const PAST = { add: 'added', remove: 'removed', replace: 'changed', rename: 'renamed' } as const;

/** `added: 1`, `removed (was 1)`, `changed from 1 to 2`. */
function change(diff: Diff): string {
  if (diff.action === 'add') return `added: ${show(diff.after)}`;
  if (diff.action === 'remove') return `removed (was ${show(diff.before)})`;
  return `${PAST[diff.action]} from ${show(diff.before)} to ${show(diff.after)}`;
}

/** A schema path as a field (`data[].total`) and the keyword changed under it (`type`). */
function describeSchemaChange(path: readonly (string | number)[], diff: Diff): string {
  let field = '';
  let rest = path;
  while (rest.length > 0) {
    if (rest[0] === 'properties' && rest.length >= 2) {
      field += `${field ? '.' : ''}${rest[1]}`;
      rest = rest.slice(2);
    } else if (rest[0] === 'items') {
      field += '[]';
      rest = rest.slice(1);
    } else break;
  }
  const keyword = rest.filter((key) => typeof key === 'string').join('.');
  if (!keyword) return `${field ? `\`${field}\`` : 'schema'} ${diff.action === 'add' ? change(diff) : PAST[diff.action]}`;
  const subject = field ? `\`${field}\` ${keyword}` : keyword;
  // An element of a list keyword (required, enum, type) added or removed: name the element.
  if (typeof rest.at(-1) === 'number' && diff.action !== 'replace')
    return `${subject} ${show(diff.action === 'add' ? diff.after : diff.before)} ${PAST[diff.action]}`;
  return `${subject} ${change(diff)}`;
}

interface Located {
  /** `GET /orders — response 200` */
  where: string;
  mediaType?: string;
  what: string;
}

/** Where in the API a difference lies and what it is, from its path in the document. */
function locate(diff: Diff, before: OpenApiJson, after: OpenApiJson): Located {
  const [section, pathTemplate, method, part, ...rest] = diff.path;
  if (section !== 'paths' || pathTemplate === undefined) {
    return { where: diff.path.join('.') || 'the document', what: change(diff) };
  }
  if (method === undefined) return { where: 'paths', what: change(diff) };
  const operation = `${String(method).toUpperCase()} ${pathTemplate}`;
  if (part === undefined) return { where: operation, what: `operation ${PAST[diff.action]}` };
  if (part === 'parameters') {
    const [index, ...schemaPath] = rest;
    const parameter = (valueAt(diff.action === 'add' ? after : before, diff.path.slice(0, 5)) ?? {}) as { in?: string; name?: string };
    const where = `${operation} — ${parameter.in} parameter \`${parameter.name ?? index}\``;
    if (schemaPath.length === 0) return { where, what: PAST[diff.action] };
    if (schemaPath[0] === 'schema') return { where, what: describeSchemaChange(schemaPath.slice(1), diff) };
    return { where, what: `${schemaPath.join('.')} ${change(diff)}` };
  }
  // requestBody → content → <media type> → schema, or responses → <status> → content → …
  const [where, contentPath] =
    part === 'responses'
      ? [`${operation} — response ${rest[0]}`, rest.slice(1)]
      : [`${operation} — ${part === 'requestBody' ? 'request body' : String(part)}`, rest];
  if (contentPath[0] === 'content' && contentPath[1] !== undefined) {
    const mediaType = String(contentPath[1]);
    if (contentPath[2] === 'schema') return { where, mediaType, what: describeSchemaChange(contentPath.slice(3), diff) };
    if (contentPath.length === 2) return { where, mediaType, what: `media type ${PAST[diff.action]}` };
  }
  if (contentPath.length === 0) return { where, what: PAST[diff.action] };
  return { where, what: `${contentPath.join('.')} ${change(diff)}` };
}

/** One line per change, `<where> (<media types>): <what>`, sorted; one line for the same change under several media types. */
function lines(changes: readonly Located[]): string[] {
  const mediaTypes = new Map<string, Set<string>>();
  for (const { where, mediaType, what } of changes) {
    const key = `${where}\u0000${what}`;
    const types = mediaTypes.get(key) ?? new Set<string>();
    if (mediaType) types.add(mediaType);
    mediaTypes.set(key, types);
  }
  return [...mediaTypes]
    .map(([key, types]) => {
      const [where, what] = key.split('\u0000') as [string, string];
      return `${where}${types.size > 0 ? ` (${[...types].join(', ')})` : ''}: ${what}`;
    })
    .sort();
}

export interface ContractChanges {
  /** What would break a client written against `before`. */
  breaking: string[];
  /** What api-smart-diff could not classify (an unknown keyword, a rule that failed): a person decides. */
  unclassified: string[];
}

/** The changes from `before` to `after` that a client of `before` could not ignore. */
export function contractChanges(before: object, after: object): ContractChanges {
  const inlinedBefore = inlineUnpairedReferences(before as OpenApiJson, after as OpenApiJson);
  const inlinedAfter = inlineUnpairedReferences(after as OpenApiJson, before as OpenApiJson);
  const breaking: Located[] = [];
  const unclassified: Located[] = [];
  for (const diff of apiCompare(inlinedBefore, inlinedAfter).diffs) {
    // A shared schema's changes are classified where it is used (in a request or a response), as
    // the paths show them; its entry under components says nothing on its own.
    if (diff.path[0] === 'components' && diff.path[1] === 'schemas') continue;
    if (isBreaking(diff, inlinedBefore)) breaking.push(locate(diff, inlinedBefore, inlinedAfter));
    else if (diff.type === 'unclassified') unclassified.push(locate(diff, inlinedBefore, inlinedAfter));
  }
  return { breaking: lines(breaking), unclassified: lines(unclassified) };
}
