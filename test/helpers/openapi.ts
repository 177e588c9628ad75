// Checks a response against the OpenAPI document the app publishes: the operation is documented,
// the status is declared for it, and the media type and JSON body are the documented ones.
import { AssertionError } from 'node:assert/strict';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import fastJsonStringify from 'fast-json-stringify';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { isApiVersion, LATEST_API_VERSION } from '../../src/core/api-versions.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export interface OpenApiResponse {
  description?: string;
  content?: Record<string, { schema?: unknown }>;
}

export interface OpenApiOperation {
  responses?: Record<string, OpenApiResponse>;
  parameters?: { name: string; in: string; required?: boolean }[];
  security?: Record<string, string[]>[];
}

export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: {
    schemas?: Record<string, unknown>;
    securitySchemes?: Record<string, { type: string; description?: string; flows?: Record<string, { scopes: Record<string, string> }> }>;
  };
}

/**
 * Operational endpoints, the home page (/) and the pages (/docs, /console) are hidden from the document on purpose, and the
 * authorization server (/oauth, /.well-known) describes itself through its discovery metadata instead.
 */
const OPERATIONAL_PATH =
  /^\/$|^\/(?:livez|readyz|metrics|(?:v\d+\/)?openapi\.json)$|^\/problems\/|^\/(?:docs|console)(?:\/|$)|^\/oauth\/|^\/\.well-known\//;

export function isOperationalPath(path: string): boolean {
  return OPERATIONAL_PATH.test(path);
}

const VERSION_PREFIX = /^\/v(\d+)(?=\/)/;

/** The version a /v<N> path names and the documented path under it; undefined for unversioned paths. */
function versionedPath(path: string): { version: number; path: string } | undefined {
  const match = VERSION_PREFIX.exec(path);
  if (!match || !isApiVersion(Number(match[1]))) return undefined;
  return { version: Number(match[1]), path: path.slice(match[0].length) };
}

export function isVersionedMirror(path: string): boolean {
  return versionedPath(path) !== undefined;
}

/** RFC 6901 escaping of one reference token. */
export function pointerToken(token: string): string {
  return token.replaceAll('~', '~0').replaceAll('/', '~1');
}

/** The value at a JSON pointer (RFC 6901) into document; undefined where it leads nowhere. */
export function resolvePointer(document: unknown, pointer: string): unknown {
  let node = document;
  for (const token of pointer.split('/').slice(1)) {
    const key = token.replaceAll('~1', '/').replaceAll('~0', '~');
    if (!node || typeof node !== 'object' || !(key in node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

interface PathTemplate {
  template: string;
  pattern: RegExp;
  params: number;
}

interface LoadedDocument {
  document: OpenApiDocument;
  templates: PathTemplate[];
  ajv: Ajv2020;
  validators: Map<string, ValidateFunction>;
  serializers: Map<string, (body: unknown) => string>;
}

// The URI the document is registered under in ajv; `#/components/schemas/X` resolves against it.
const DOCUMENT_ID = 'https://orderpay.invalid/openapi.json';
const loaded = new WeakMap<FastifyInstance, Map<number, LoadedDocument>>();

function loadDocument(app: FastifyInstance, version = LATEST_API_VERSION): LoadedDocument {
  let byVersion = loaded.get(app);
  if (!byVersion) {
    byVersion = new Map();
    loaded.set(app, byVersion);
  }
  let entry = byVersion.get(version);
  if (entry) return entry;
  // A copy: the app serves this object, which must not change.
  const document = structuredClone(app.openApiDocument(version)) as unknown as OpenApiDocument;
  // Not strict: the document's own members (openapi, info, paths…) are not schema keywords.
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats(ajv);
  ajv.addSchema({ ...document, $id: DOCUMENT_ID });
  const templates = Object.keys(document.paths).map((template) => {
    const source = template
      .split('/')
      .map((segment) => (/^\{[^}]+\}$/.test(segment) ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    return { template, pattern: new RegExp(`^${source}$`), params: (template.match(/\{/g) ?? []).length };
  });
  // A static segment wins over a parameter, as in the router.
  templates.sort((a, b) => a.params - b.params);
  entry = { document, templates, ajv, validators: new Map(), serializers: new Map() };
  byVersion.set(version, entry);
  return entry;
}

/** A version's published document (the latest by default), as a copy that tests may read freely. */
export function openApiDocument(app: FastifyInstance, version = LATEST_API_VERSION): OpenApiDocument {
  return loadDocument(app, version).document;
}

/** The document's path template a request path falls under, if any. */
export function findPathTemplate(app: FastifyInstance, path: string, version = LATEST_API_VERSION): string | undefined {
  return loadDocument(app, version).templates.find((t) => t.pattern.test(path))?.template;
}

function validatorFor(entry: LoadedDocument, pointer: string): ValidateFunction {
  let validate = entry.validators.get(pointer);
  if (!validate) {
    validate = entry.ajv.compile({ $ref: `${DOCUMENT_ID}#${pointer}` });
    entry.validators.set(pointer, validate);
  }
  return validate;
}

function mediaTypeOf(response: LightMyRequestResponse): string | undefined {
  const header = response.headers['content-type'];
  return typeof header === 'string' ? header.split(';', 1)[0]!.trim().toLowerCase() : undefined;
}

function isJsonMediaType(mediaType: string): boolean {
  return mediaType === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(mediaType);
}

function formatErrors(errors: ErrorObject[] | null | undefined): string {
  return (errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? e.keyword} ${JSON.stringify(e.params)}`).join('; ');
}

function parseJson(response: LightMyRequestResponse, fail: (reason: string) => never): unknown {
  try {
    return JSON.parse(response.body);
  } catch {
    return fail(`the body is not JSON: ${response.body.slice(0, 200)}`);
  }
}

function checkBody(
  entry: LoadedDocument,
  response: LightMyRequestResponse,
  documented: OpenApiResponse,
  pointer: string,
  fail: (reason: string) => never,
): void {
  const content = documented.content ?? {};
  if (response.statusCode === 204 || response.statusCode === 304 || Object.keys(content).length === 0) {
    if (response.body !== '') fail(`the document declares no body, but one was sent: ${response.body.slice(0, 200)}`);
    return;
  }
  const mediaType = mediaTypeOf(response);
  if (!mediaType || !isJsonMediaType(mediaType))
    fail(`content type ${String(response.headers['content-type'])} is neither JSON nor problem+json`);
  if (!(mediaType in content)) fail(`content type ${mediaType} is not documented (documented: ${Object.keys(content).join(', ')})`);
  const body = parseJson(response, fail);
  const schemaPointer = `${pointer}/content/${pointerToken(mediaType)}/schema`;
  const validate = validatorFor(entry, schemaPointer);
  if (!validate(body))
    fail(`the body does not match the documented schema: ${formatErrors(validate.errors)}\nbody: ${response.body.slice(0, 500)}`);
  const written = serializerFor(entry, schemaPointer)(body);
  if (written !== response.body) {
    let at = 0;
    while (written[at] === response.body[at]) at += 1;
    const around = (text: string) => text.slice(Math.max(at - 200, 0), at + 200);
    fail(
      `the body is not written as its schema writes it (members in the documented order), from character ${at}:\n   sent: …${around(response.body)}\nschema's: …${around(written)}`,
    );
  }
}

/**
 * The body as a serializer compiled from the documented schema writes it: the server writes
 * bodies with JSON.stringify (src/http/serializers.ts), so this holds every member in the order
 * the document gives, and nothing the schema would not write.
 */
function serializerFor(entry: LoadedDocument, pointer: string): (body: unknown) => string {
  let serialize = entry.serializers.get(pointer);
  if (!serialize) {
    const schema = resolvePointer(entry.document, pointer) as Record<string, unknown>;
    // The document's components beside the schema: its $refs (#/components/schemas/…) resolve as in the document.
    const rooted = { ...schema, components: entry.document.components } as unknown as Parameters<typeof fastJsonStringify>[0];
    serialize = fastJsonStringify(rooted);
    entry.serializers.set(pointer, serialize);
  }
  return serialize;
}

/**
 * Throws an AssertionError unless the response is one the OpenAPI document allows for this
 * request. Requests to no documented path must be the 404/405 problems of the router.
 */
export function assertMatchesOpenApi(app: FastifyInstance, method: string, url: string, response: LightMyRequestResponse): void {
  const path = url.split('?', 1)[0]!;
  if (isOperationalPath(path)) return;
  const fail = (reason: string): never => {
    throw new AssertionError({
      message: `${method} ${url} → ${response.statusCode}: ${reason}`,
      actual: response.statusCode,
      operator: 'assertMatchesOpenApi',
    });
  };
  // /v<N> paths name their version; unversioned ones say which they got in Api-Version.
  const versioned = versionedPath(path);
  const answered = Number(response.headers['api-version']);
  const version = versioned?.version ?? (isApiVersion(answered) ? answered : LATEST_API_VERSION);
  const entry = loadDocument(app, version);
  const template = findPathTemplate(app, versioned?.path ?? path, version);
  const verb = method.toLowerCase() === 'head' ? 'get' : method.toLowerCase();
  const operation = template ? entry.document.paths[template]?.[verb] : undefined;

  if (!operation) {
    // Not an operation: the router answers 404 (unknown path) or 405 (known path, other method).
    const expected = template ? 405 : 404;
    if (response.statusCode !== expected) fail(`no documented operation, so the answer must be ${expected}`);
    if (expected === 405 && !response.headers.allow) fail('405 without an Allow header');
    if (mediaTypeOf(response) !== 'application/problem+json')
      fail(`content type ${String(response.headers['content-type'])} is not application/problem+json`);
    const validate = validatorFor(entry, '/components/schemas/Problem');
    if (method.toUpperCase() !== 'HEAD' && !validate(parseJson(response, fail)))
      fail(`the body is not a Problem: ${formatErrors(validate.errors)}`);
    return;
  }

  const status = String(response.statusCode);
  const statusKey = [status, `${status[0]}XX`, 'default'].find((key) => operation.responses?.[key] !== undefined);
  if (!statusKey)
    fail(
      `status ${status} is not documented for ${verb.toUpperCase()} ${template} (documented: ${Object.keys(operation.responses ?? {}).join(', ')})`,
    );
  if (method.toUpperCase() === 'HEAD') return;
  const pointer = `/paths/${pointerToken(template!)}/${verb}/responses/${pointerToken(statusKey!)}`;
  checkBody(entry, response, operation.responses![statusKey!]!, pointer, fail);
}
