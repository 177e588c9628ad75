// Money: integer minor units beside an ISO 4217 currency; never a float in arithmetic.
import { DomainError } from './errors.ts';

/** ISO 4217 codes as the runtime's ICU knows them (active currencies), in order. */
export const CURRENCY_CODES: readonly string[] = Intl.supportedValuesOf('currency');
const CURRENCIES = new Set(CURRENCY_CODES);

export function isSupportedCurrency(code: string): boolean {
  return CURRENCIES.has(code);
}

export function assertCurrency(code: string, pointer = '/currency'): void {
  if (!isSupportedCurrency(code)) {
    throw new DomainError('REQUEST_BODY_INVALID', `${pointer} "${code}" is not an ISO 4217 currency code.`, {
      errors: [{ pointer, detail: `"${code}" is not an ISO 4217 currency code` }],
    });
  }
}
