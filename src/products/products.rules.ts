// Product rules, pure.
import { ProblemError } from '../http/problem.ts';

// ISO 4217 codes as the runtime's ICU knows them (active currencies).
const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));

export function isSupportedCurrency(code: string): boolean {
  return CURRENCIES.has(code);
}

export function assertCurrency(code: string, pointer = '/currency'): void {
  if (!isSupportedCurrency(code)) {
    throw new ProblemError('REQUEST_BODY_INVALID', `${pointer} "${code}" is not an ISO 4217 currency code.`, {
      errors: [{ pointer, detail: `"${code}" is not an ISO 4217 currency code` }],
    });
  }
}

/** Same-content replacement changes nothing (PUT is idempotent). */
export function isSameProduct(a: { name: string; price: number; currency: string; active: boolean }, b: typeof a): boolean {
  return a.name === b.name && a.price === b.price && a.currency === b.currency && a.active === b.active;
}
