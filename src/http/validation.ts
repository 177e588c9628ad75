// Schema validators: bodies are validated as sent (no type coercion, unknown fields refused,
// never stripped); path and query strings are coerced to the declared types, and a parameter
// that appears twice arrives as an array and fails its scalar type.
import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

function createAjv(options: Options): Ajv {
  const ajv = new Ajv({ allErrors: true, removeAdditional: false, strict: false, ...options });
  addFormats(ajv);
  return ajv;
}

export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const bodyAjv = createAjv({ coerceTypes: false, useDefaults: false });
  const paramAjv = createAjv({ coerceTypes: true, useDefaults: true });
  return ({ schema, httpPart }) => (httpPart === 'body' ? bodyAjv : paramAjv).compile(schema as object);
}
