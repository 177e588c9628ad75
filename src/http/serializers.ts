// Response serializers, compiled once per distinct schema. Fastify compiles one per route and
// status, and every resource route is registered four times (each API version, prefixed and
// negotiated), most of them answering the same schemas (a problem, an order in one version):
// compiling each distinct one once takes start-up from ~6 s to ~2 s of CPU and keeps ~5 MB of
// generated code off the heap (docs/benchmarks.md, "Memory").
import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

type SerializerFactory = NonNullable<
  NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']
>;
type CompileSerializer = ReturnType<SerializerFactory>;

export function sharedSerializers(): SerializerFactory {
  const buildCompiler = SerializerSelector();
  // A schema compiles to the same function only against the same shared schemas ($ref targets).
  const compiledByContext = new Map<string, Map<string, ReturnType<CompileSerializer>>>();
  return function buildSharedSerializerCompiler(externalSchemas, options) {
    const compile = buildCompiler(externalSchemas, options);
    const context = JSON.stringify(externalSchemas);
    const compiled = compiledByContext.get(context) ?? new Map<string, ReturnType<CompileSerializer>>();
    compiledByContext.set(context, compiled);
    return function compileSharedSerializer(route) {
      const key = JSON.stringify(route.schema);
      const known = compiled.get(key);
      if (known) return known;
      const serializer = compile(route);
      compiled.set(key, serializer);
      return serializer;
    };
  };
}
