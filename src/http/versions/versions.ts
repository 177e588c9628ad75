// Rendering every API version from the latest: schemas (validation, serialization, OpenAPI),
// response bodies (latest → older) and request bodies (older → latest), through VERSION_CHANGES.
import type { TObject } from 'typebox';
import { LATEST_API_VERSION } from '../../core/api-versions.ts';
import { VERSION_CHANGES } from './changes.ts';
import type { JsonObject, VersionChange } from './version-change.ts';

/** The changes between version and the latest, newest first: the way back from the latest. */
const wayBack = new Map<number, readonly VersionChange[]>();

function changesAfter(version: number): readonly VersionChange[] {
  let changes = wayBack.get(version);
  if (!changes) {
    changes = VERSION_CHANGES.filter((c) => c.version > version).reverse();
    wayBack.set(version, changes);
  }
  return changes;
}

/** The $id a resource schema has in a version: the latest keeps its name, older ones are prefixed ("v1.Order"). */
export function versionedSchemaId(id: string, version: number): string {
  return version === LATEST_API_VERSION ? id : `v${version}.${id}`;
}

/** The name versionedSchemaId gave, without its version prefix. */
export function unversionedSchemaId(id: string): string {
  return id.replace(/^v\d+\./, '');
}

/** Whether a change touches the resource or request body of this name in versions before the latest. */
export function isVersioned(name: string): boolean {
  return VERSION_CHANGES.some((c) => name in c.resources || name in c.requests);
}

const resourceSchemas = new Map<string, TObject>();

/**
 * A resource's schema (named by its $id) as version shows it, under its versioned $id. Called for
 * every resource and version when the app registers its schemas, which showsField then reads.
 */
export function resourceSchemaAt(schema: TObject, version: number): TObject {
  const id = String((schema as { $id?: unknown }).$id);
  let older = schema;
  for (const change of changesAfter(version)) older = change.resources[id]?.schema(older) ?? older;
  const versioned = { ...(refsAt(older, version) as TObject), $id: versionedSchemaId(id, version) } as TObject;
  resourceSchemas.set(versionedSchemaId(id, version), versioned);
  return versioned;
}

/** A copy of a schema whose references to other resources (v2's Order → OrderItem) name the same version's. */
function refsAt(schema: unknown, version: number): unknown {
  if (version === LATEST_API_VERSION || !schema || typeof schema !== 'object') return schema;
  if (Array.isArray(schema)) return schema.map((item) => refsAt(item, version));
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    copy[key] = key === '$ref' && typeof value === 'string' ? versionedSchemaId(value, version) : refsAt(value, version);
  }
  return copy;
}

/** Whether version shows a field of a resource: what a route need not load when it does not. */
export function showsField(resource: string, field: string, version: number): boolean {
  const schema = resourceSchemas.get(versionedSchemaId(resource, version));
  if (!schema) throw new Error(`resource ${resource} has no registered schema for v${version}`);
  return field in schema.properties;
}

/**
 * The values of a resource's field that version can show (what the changes after it declare they
 * can show, together); undefined when it can show them all.
 */
export function shownValues(resource: string, field: string, version: number): readonly string[] | undefined {
  let shown: readonly string[] | undefined;
  for (const change of changesAfter(version)) {
    const values = change.resources[resource]?.shows?.[field];
    if (values) shown = shown ? shown.filter((value) => values.includes(value)) : values;
  }
  return shown;
}

/** A request body's schema (named by its title) as version accepts it. */
export function requestSchemaAt(schema: TObject, version: number): TObject {
  const name = String((schema as { title?: unknown }).title);
  let older = schema;
  for (const change of changesAfter(version)) older = change.requests[name]?.schema(older) ?? older;
  return older;
}

/** A latest representation of resource → the same as version shows it. */
export function downgrade(resource: string, body: JsonObject, version: number): JsonObject {
  let older = body;
  for (const change of changesAfter(version)) {
    const reshape = change.resources[resource];
    if (reshape) older = reshape.downgrade(older);
  }
  return older;
}

/** A request body as version's client sent it → the latest body the handler reads. */
export function upgradeRequest(name: string, body: JsonObject, version: number): JsonObject {
  let newer = body;
  for (const change of [...changesAfter(version)].reverse()) {
    const reshape = change.requests[name];
    if (reshape) newer = reshape.upgrade(newer);
  }
  return newer;
}

/** A JSON pointer into the upgraded body → the pointer into the body version's client sent. */
export function requestPointer(name: string, pointer: string, version: number): string {
  let older = pointer;
  for (const change of changesAfter(version)) older = change.requests[name]?.pointer?.(older) ?? older;
  return older;
}
