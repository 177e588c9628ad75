// Response bodies are written by JSON.stringify, not by a serializer compiled from each response
// schema (record 0127). The representations (`*.representation.ts`, the version changes) already
// shape every body field by field, so the schema's serializer added no safety a test does not
// give (every response a test receives is checked against the OpenAPI document,
// test/helpers/openapi.ts, byte for byte against the schema's serializer), and it cost a page of
// orders ~20 µs of CPU per request: it builds the body as a rope of small strings, which V8 then
// flattens again to count its bytes.
import type { FastifyServerOptions } from 'fastify';

type SerializerFactory = NonNullable<
  NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']
>;

function serializeJson(data: unknown): string {
  return JSON.stringify(data);
}

/** Fastify's compilersFactory.buildSerializer: every route and status gets JSON.stringify. */
export function jsonSerializers(): SerializerFactory {
  return () =>
    function compileJsonSerializer() {
      return serializeJson;
    };
}
