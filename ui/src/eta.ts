// The time left of a run in progress, between two finished items: the core's moving rate says
// how long the last few items took; the item under way counts toward it once it has taken
// longer than their average, so the estimate counts down while items keep pace and grows while
// one takes longer, never standing still.

/** Seconds left with `remaining` items to finish (the one under way included), the last
 *  `windowItems` items having finished in `windowS` seconds, `sinceDone` seconds after the
 *  latest one finished. Null when no item has finished yet (no rate to go on). */
export function liveEta(remaining: number, windowItems: number, windowS: number, sinceDone: number): number | null {
  if (windowItems <= 0 || windowS <= 0 || remaining < 0) return null;
  if (remaining === 0) return 0;
  const perItem = windowS / windowItems;
  // The item under way has taken `sinceDone` at least: past the average it raises the average.
  const withCurrent = Math.max(perItem, (windowS + sinceDone) / (windowItems + 1));
  return Math.max(withCurrent - sinceDone, 0) + (remaining - 1) * withCurrent;
}
