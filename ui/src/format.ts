// Display formatting only: every number shown is computed by the core; these functions round it.

/** The core writes an undefined value (a metric no pair has, a bound of no interval) as null. */
const missing = (value: number | null | undefined): value is null | undefined =>
  value === null || value === undefined || Number.isNaN(value);

export function fixed(value: number | null | undefined, digits = 3): string {
  return missing(value) ? "—" : value.toFixed(digits);
}

export function interval(ci: [number | null, number | null] | null | undefined): string {
  return ci && !missing(ci[0]) && !missing(ci[1]) ? `[${fixed(ci[0])}, ${fixed(ci[1])}]` : "—";
}

export function signed(value: number | null | undefined): string {
  return missing(value) ? "—" : (value > 0 ? "+" : "") + value.toFixed(3);
}

/** A value and its interval: one dash when there is no value (no interval can exist then). */
export function withInterval(
  value: number | null | undefined,
  ci: [number | null, number | null] | null | undefined,
  show: (value: number | null | undefined) => string = fixed,
): string {
  return missing(value) ? "—" : `${show(value)} ${interval(ci)}`;
}

export function ms(value: number | null | undefined): string {
  if (missing(value)) return "—";
  return value >= 1000 ? `${(value / 1000).toFixed(1)} s` : `${value.toFixed(1)} ms`;
}

export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return "—";
  const s = Math.round(seconds);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

export function when(rfc3339: string): string {
  return rfc3339.replace("T", " ").replace(/(\.\d+)?Z$/, " UTC");
}

/** "1 question", "3 questions". */
export function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

export function bytes(n: number): string {
  return n >= 2 ** 30 ? `${(n / 2 ** 30).toFixed(2)} GB` : `${(n / 2 ** 20).toFixed(0)} MB`;
}
