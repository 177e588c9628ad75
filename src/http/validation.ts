// Schema validators: bodies are validated as sent (no type coercion, unknown fields refused,
// never stripped); path and query strings are coerced to the declared types, and a parameter
// that appears twice arrives as an array and fails its scalar type.
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { ROUTE_CHECKED } from './schemas.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

function createAjv(options: Options): Ajv {
  const ajv = new Ajv({ allErrors: true, removeAdditional: false, strict: false, ...options });
  addFormats(ajv);
  // int32/int64 name an integer's width for the OpenAPI document and generated clients; the
  // schema's type and bounds already decide, and a second error for 1.5 would only repeat "must be integer".
  for (const width of ['int32', 'int64']) ajv.addFormat(width, { type: 'number', validate: () => true });
  return ajv;
}

// Ajv coerces every string Number() reads ("0x10", "1e3", " 7", "+7") to a number; an integer
// parameter must be written in decimal digits, anything else is malformed.
const DECIMAL_INTEGER = /^-?[0-9]+$/;

function integerParameters(schema: unknown): string[] {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
  return Object.keys(properties).filter((name) => properties[name]?.type === 'integer');
}

function refuseNonDecimalIntegers(validate: ValidateFunction, names: string[]): ValidateFunction {
  if (names.length === 0) return validate;
  const validateParameters = function validateDecimalIntegers(data: Record<string, unknown>) {
    const malformed = names.filter((name) => typeof data?.[name] === 'string' && !DECIMAL_INTEGER.test(data[name] as string));
    const raw = malformed.map((name) => data[name]);
    const valid = validate(data);
    const others = (validate.errors ?? []).filter((e) => !malformed.some((name) => e.instancePath === `/${name}`));
    const own: ErrorObject[] = malformed.map((name, i) => ({
      keyword: 'type',
      instancePath: `/${name}`,
      schemaPath: `#/properties/${name}/type`,
      params: { type: 'integer' },
      message: 'must be integer',
      data: raw[i],
    }));
    validateParameters.errors = [...others, ...own];
    return valid && own.length === 0;
  } as ValidateFunction;
  return validateParameters;
}

/**
 * The schema as the validator applies it: without the keywords a route checks itself (routeChecked
 * in src/http/schemas.ts), which the documents still state.
 */
function withoutRouteChecked(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutRouteChecked);
  if (typeof schema !== 'object' || schema === null) return schema;
  const checked = new Set<string>((schema as Record<string, unknown>)[ROUTE_CHECKED] as string[] | undefined);
  const kept = Object.entries(schema).filter(([keyword]) => keyword !== ROUTE_CHECKED && !checked.has(keyword));
  return Object.fromEntries(kept.map(([keyword, value]) => [keyword, withoutRouteChecked(value)]));
}

export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const bodyAjv = createAjv({ coerceTypes: false, useDefaults: false });
  // verbose: errors carry the offending value, to tell a repeated parameter from a malformed one.
  // No defaults filled in: a schema's default documents what the handler does without the parameter
  // (pageOf applies page=1), and a page filled in could not be told from one sent beside a cursor.
  const paramAjv = createAjv({ coerceTypes: true, useDefaults: false, verbose: true });
  const compile = (schema: object, body: boolean): ValidateFunction =>
    body ? bodyAjv.compile(schema) : refuseNonDecimalIntegers(paramAjv.compile(schema), integerParameters(schema));
  // Every resource route is registered once per API version, prefixed and negotiated: the same
  // schema is compiled once (Ajv itself only recognises the same object).
  const compiled = new Map<string, ValidateFunction>();
  return ({ schema, httpPart }) => {
    const body = httpPart === 'body';
    const key = `${body ? 'body' : 'params'} ${JSON.stringify(schema)}`;
    const known = compiled.get(key);
    if (known) return known;
    const validate = compile(withoutRouteChecked(schema) as object, body);
    compiled.set(key, validate);
    return validate;
  };
}
