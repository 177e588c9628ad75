// A conditional request's precondition (RFC 9110 §13), as a service sees it: the edge knows how
// entity tags are spelt; the service knows when the resource is locked and what it holds now.

/**
 * Judges the resource as it is now, once the service holds it locked, and throws when the
 * request's precondition fails; current is undefined when it has no current representation.
 */
export type Precondition<T> = (current: T | undefined) => void;
