// A version change: one breaking difference between an API version and the one before it, as a
// small module (Stripe's "version change" design). The services speak the latest version; an
// older version is the latest passed back through every change newer than it, newest first.
import { Type, type TObject, type TSchema } from 'typebox';

/** A JSON object as it travels: a representation or a request body. */
export type JsonObject = Record<string, unknown>;

/** How a change reshapes one response resource (a schema with an $id, e.g. Order). */
export interface ResourceChange {
  /** The resource's schema before the change, from the schema after it. */
  schema(newer: TObject): TObject;
  /** A representation after the change → the same before it. */
  downgrade(body: JsonObject): JsonObject;
  /**
   * The values of a field (the newer representation's) that the older version can show at all:
   * a resource in another is not there for that version (a payment in progress, for v2).
   */
  shows?: Readonly<Record<string, readonly string[]>>;
}

/** How a change reshapes one request body (a body schema whose title names it, e.g. CreateOrderBody). */
export interface RequestChange {
  /** The body's schema before the change, from the schema after it. */
  schema(newer: TObject): TObject;
  /** A body as sent before the change → the body after it (what the handler reads). */
  upgrade(body: JsonObject): JsonObject;
  /** A JSON pointer into the upgraded body → the one into the body the client sent (RFC 6901). */
  pointer?(pointer: string): string;
}

export interface VersionChange {
  /** The version that introduced the change: every older version is shown the world without it. */
  version: number;
  /** One line for the changelog and the migration guide. */
  description: string;
  resources: Readonly<Record<string, ResourceChange>>;
  requests: Readonly<Record<string, RequestChange>>;
}

/**
 * A copy of an object schema with its properties rebuilt by build (which gets them in order), and
 * every other keyword (description, additionalProperties) kept. The $id is set by the caller.
 */
export function reshape(schema: TObject, build: (properties: Record<string, TSchema>) => Record<string, TSchema>): TObject {
  const { properties, required: _required, type: _type, ...options } = schema as TObject & Record<string, unknown>;
  return Type.Object(build({ ...properties }), options);
}

/** Properties in order with some left out. */
export function without(properties: Record<string, TSchema>, names: readonly string[]): Record<string, TSchema> {
  return Object.fromEntries(Object.entries(properties).filter(([name]) => !names.includes(name)));
}
