// Email addresses as accounts know them. One key for the lookup, the uniqueness of accounts and the
// per-account sign-in limit, so they can never disagree: JavaScript's toLowerCase and PostgreSQL's
// lower() fold some non-ASCII letters differently ("İ" is "i̇" in one, "i" in the other under most
// locales), which let a variant of an address reach the account outside its limit. Account emails
// are ASCII (internationalised addresses, RFC 6531, are refused), where both fold alike.

/** The address as compared: trimmed, ASCII lower case; undefined when it is not printable ASCII. */
export function emailKey(email: string): string | undefined {
  const trimmed = email.trim();
  return /^[\x21-\x7e]+$/.test(trimmed) ? trimmed.toLowerCase() : undefined;
}
