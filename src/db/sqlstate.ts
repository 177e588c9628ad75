// Database failures → domain errors: the one SQLSTATE table (PostgreSQL Appendix A), like
// PostgREST's Error.hs. Classes not listed are internal errors. A constraint whose violation means
// something to the client is answered where the write knows what (users.service.ts,
// forExistingSubject: the token's user named by orders' and payments' customer_id).
import { DomainError } from '../core/errors.ts';
import { isDatabaseError, type DatabaseError } from './db.ts';

const unavailable = (detail: string) => new DomainError('SERVICE_UNAVAILABLE', detail);

const SQLSTATE_ERRORS: readonly { matches: (code: string) => boolean; error: () => DomainError }[] = [
  {
    matches: (code) => code === '23505',
    error: () => new DomainError('RESOURCE_CONFLICT', 'A resource with this unique value already exists.'),
  },
  // Reached only once src/db/transaction.ts has run out of retries.
  {
    matches: isRetryableCode,
    error: () => new DomainError('RESOURCE_CONFLICT', 'A concurrent change conflicted with this one; retry the request.'),
  },
  // NUL and invalid byte sequences can only arrive inside JSON strings: schemas check the rest.
  {
    matches: (code) => code === '22021' || code === '22P05',
    error: () => new DomainError('REQUEST_BODY_INVALID', 'A text value contains a character that cannot be stored (such as U+0000).'),
  },
  {
    matches: (code) => code.startsWith('22'),
    error: () => new DomainError('REQUEST_PARAMETER_INVALID', 'A value is out of the range the server can store.'),
  },
  {
    // Timeouts, lock waits, lost connections, resource exhaustion, shutdown, recovery.
    matches: (code) =>
      ['57014', '55P03', '25P03', '57P01', '57P03', '55000'].includes(code) || code.startsWith('08') || code.startsWith('53'),
    error: () => unavailable('The database is busy or unreachable; retry shortly.'),
  },
];

function isRetryableCode(code: string): boolean {
  // 40001 serialization_failure, 40P01 deadlock_detected: the transaction did nothing; run it again.
  return code === '40001' || code === '40P01';
}

/** A conflict that running the whole transaction again can resolve. */
export function isRetryableConflict(error: unknown): boolean {
  return isDatabaseError(error) && isRetryableCode(error.code);
}

/** A unique violation, of the named constraint (or unique index) when one is given. */
export function isUniqueViolation(error: unknown, constraint?: string): error is DatabaseError {
  return isDatabaseError(error) && error.code === '23505' && (constraint === undefined || error.constraint === constraint);
}

/** A foreign key violation (a row names one that does not exist). */
export function isForeignKeyViolation(error: unknown): error is DatabaseError {
  return isDatabaseError(error) && error.code === '23503';
}

const UNREACHABLE_NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND']);
// The process (EMFILE) or the machine (ENFILE) is out of file descriptors: a new connection to the
// database cannot even be opened. Our overload, not the client's fault, and it passes.
const EXHAUSTED_NODE_CODES = new Set(['EMFILE', 'ENFILE']);
// node-postgres reports a pool or client it cannot use with these messages and no code (the last:
// a pool already ended, its process shutting down); PGlite, once closed, answers every query with
// "PGlite is closed"; a query without an answer within the client-side query timeout (a server
// or a pooler that holds it), "Query read timeout".
const UNREACHABLE_MESSAGES =
  /timeout exceeded when trying to connect|Connection terminated|connection error and is not queryable|closed and is not queryable|^Cannot use a pool after calling end on the pool$|^PGlite is closed$|^Query read timeout$/i;

/** The database failure this error is, as a domain error; undefined when it is not one we know. */
export function databaseFailure(error: unknown): DomainError | undefined {
  if (isDatabaseError(error)) {
    return SQLSTATE_ERRORS.find((entry) => entry.matches(error.code))?.error();
  }
  if (!(error instanceof Error)) return undefined;
  const nodeCode = (error as { code?: unknown }).code;
  if (typeof nodeCode === 'string' && EXHAUSTED_NODE_CODES.has(nodeCode)) return unavailable('The server is overloaded; retry shortly.');
  if ((typeof nodeCode === 'string' && UNREACHABLE_NODE_CODES.has(nodeCode)) || UNREACHABLE_MESSAGES.test(error.message)) {
    return unavailable('The database is unreachable; retry shortly.');
  }
  return undefined;
}
