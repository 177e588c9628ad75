// PATCH bodies are JSON Merge Patch documents (RFC 7396), sent as application/merge-patch+json and
// only on PATCH: a PATCH in any other media type is refused with 415 and Accept-Patch (RFC 5789
// §2.2), and a merge patch sent to another method is refused like any body that is not JSON.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { hasBody } from './content-coding.ts';
import { ProblemError } from './problem.ts';

export const MERGE_PATCH_MEDIA_TYPE = 'application/merge-patch+json';

/** The Accept-Patch field (RFC 5789 §3.1) of a resource that takes merge patches. */
export const ACCEPT_PATCH = { 'accept-patch': MERGE_PATCH_MEDIA_TYPE };

type Json = null | boolean | number | string | Json[] | { [member: string]: Json };

const isObject = (value: unknown): value is Record<string, Json> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** RFC 7396 §2: MergePatch(Target, Patch), without changing either. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const result: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [name, value] of Object.entries(patch)) {
    if (value === null) delete result[name];
    else result[name] = applyMergePatch(result[name], value);
  }
  return result;
}

/**
 * The JSON Pointers (RFC 6901) of the members a merge patch removes: its nulls, in objects at any
 * depth (a null inside an array is a value of the array that replaces the target's).
 */
export function removedMembers(patch: unknown, pointer = ''): string[] {
  if (!isObject(patch)) return [];
  return Object.entries(patch).flatMap(([name, value]) => {
    const path = `${pointer}/${name.replaceAll('~', '~0').replaceAll('/', '~1')}`;
    return value === null ? [path] : removedMembers(value, path);
  });
}

function mediaType(request: FastifyRequest): string {
  return (request.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase();
}

/** preParsing of a PATCH route: its body is a merge patch, or the request is refused before it is read. */
export async function requireMergePatch(request: FastifyRequest): Promise<void> {
  if (!hasBody(request) || mediaType(request) === MERGE_PATCH_MEDIA_TYPE) return;
  throw new ProblemError(
    'REQUEST_UNSUPPORTED_MEDIA_TYPE',
    `PATCH takes a JSON Merge Patch (RFC 7396): send it as ${MERGE_PATCH_MEDIA_TYPE}.`,
    {
      headers: ACCEPT_PATCH,
    },
  );
}

async function mergePatch(app: FastifyInstance): Promise<void> {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser(MERGE_PATCH_MEDIA_TYPE, { parseAs: 'string' }, function parseMergePatch(request, body, done) {
    if (request.method === 'PATCH') return parseJson(request, body as string, done);
    done(new ProblemError('REQUEST_UNSUPPORTED_MEDIA_TYPE', `Send the body as application/json; ${MERGE_PATCH_MEDIA_TYPE} is for PATCH.`));
  });
}

export const mergePatchPlugin = fp(mergePatch, { name: 'orderpay-merge-patch', fastify: '5.x' });
