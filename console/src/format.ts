// Money and time as the console shows them: amounts from integer minor units with the currency's
// own number of digits (Intl.NumberFormat), instants in UTC.

export interface Money {
  value: number;
  currency: string;
}

/** ISO 4217 minor-unit digits: 2 for EUR, 0 for JPY, 3 for BHD. */
export function currencyDigits(currency: string): number {
  return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
}

export function formatMoney({ value, currency }: Money): string {
  const digits = currencyDigits(currency);
  return new Intl.NumberFormat(undefined, {
    style: 'currency',
    currency,
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  }).format(value / 10 ** digits);
}

/** A decimal amount typed by a person ("12.5") in minor units (1250), or undefined when it is not one. */
export function parseAmount(text: string, currency: string): number | undefined {
  const digits = currencyDigits(currency);
  const match = /^\s*(\d{1,9})(?:[.,](\d*))?\s*$/.exec(text);
  if (!match) return undefined;
  const fraction = match[2] ?? '';
  if (fraction.length > digits) return undefined;
  return Number(match[1]) * 10 ** digits + Number(fraction.padEnd(digits, '0') || '0');
}

/** The amount in major units as an input shows it ("12.50"). */
export function amountText({ value, currency }: Money): string {
  const digits = currencyDigits(currency);
  if (digits === 0) return String(value);
  const text = String(value).padStart(digits + 1, '0');
  return `${text.slice(0, -digits)}.${text.slice(-digits)}`;
}

const instant = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'medium', timeZone: 'UTC' });

export function formatInstant(iso: string | null | undefined): string {
  if (!iso) return '—';
  return `${instant.format(new Date(iso))} UTC`;
}

/** YYYY-MM-DD of a date, in UTC (the days the daily collections count in). */
export function utcDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}
