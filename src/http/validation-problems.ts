// Schema validation errors (Ajv) → one 400 problem naming each field or parameter.
import { DomainError, type FieldError } from '../core/errors.ts';

export interface AjvError {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
  /** The offending value (validators compiled with verbose: true). */
  data?: unknown;
}

/** A member name as one RFC 6901 reference token ("~" → "~0", "/" → "~1"); Ajv's instancePath is already escaped. */
function token(name: unknown): string {
  return String(name).replaceAll('~', '~0').replaceAll('/', '~1');
}

function pointerOf(error: AjvError): string {
  if (error.keyword === 'additionalProperties') return `${error.instancePath}/${token(error.params.additionalProperty)}`;
  if (error.keyword === 'required') return `${error.instancePath}/${token(error.params.missingProperty)}`;
  return error.instancePath || '';
}

function describe(error: AjvError): string {
  if (error.keyword === 'additionalProperties') return 'is not a known field';
  if (error.keyword === 'required') return 'is required';
  return error.message ?? 'is invalid';
}

/** Whether the errors report this header missing (header names are lower case). */
export function isMissingHeader(errors: readonly AjvError[], name: string): boolean {
  return errors.some((e) => e.keyword === 'required' && e.params.missingProperty === name);
}

/** context: where the errors were found, as Fastify names it (body, headers, querystring, params). */
export function validationProblem(context: string, errors: AjvError[]): DomainError {
  if (context === 'body') {
    const fieldErrors: FieldError[] = errors.map((e) => ({ pointer: pointerOf(e), detail: `${pointerOf(e) || 'body'} ${describe(e)}` }));
    return new DomainError('REQUEST_BODY_INVALID', fieldErrors.map((e) => e.detail).join('; '), { errors: fieldErrors });
  }
  if (context === 'headers') {
    const fieldErrors = errors.map((e) => ({ parameter: pointerOf(e).slice(1), detail: `header ${pointerOf(e).slice(1)} ${describe(e)}` }));
    return new DomainError('REQUEST_HEADER_INVALID', fieldErrors.map((e) => e.detail).join('; '), { errors: fieldErrors });
  }
  const unknown = errors.filter((e) => e.keyword === 'additionalProperties');
  if (context === 'querystring' && unknown.length > 0) {
    const fieldErrors = unknown.map((e) => {
      const name = String(e.params.additionalProperty);
      return { parameter: name, detail: `query parameter "${name}" is not supported by this collection` };
    });
    return new DomainError('QUERY_UNKNOWN_PARAMETER', fieldErrors.map((e) => e.detail).join('; '), { errors: fieldErrors });
  }
  // A repeated or malformed parameter fails its type; its other errors would only repeat that.
  const repeated = new Set(errors.filter((e) => e.keyword === 'type').map((e) => pointerOf(e)));
  const relevant = errors.filter((e) => e.keyword === 'type' || !repeated.has(pointerOf(e)));
  const fieldErrors = relevant.map((e) => {
    const name = pointerOf(e).slice(1).split('/')[0] ?? '';
    const where = context === 'params' ? 'path parameter' : 'query parameter';
    const detail =
      e.keyword === 'type' && Array.isArray(e.data) ? `${where} "${name}" may appear only once` : `${where} "${name}" ${describe(e)}`;
    return { parameter: name, detail };
  });
  return new DomainError('REQUEST_PARAMETER_INVALID', fieldErrors.map((e) => e.detail).join('; '), { errors: fieldErrors });
}
