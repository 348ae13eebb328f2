import { describe, expect, it } from "vitest";
import { count, duration, fixed, interval, ms, signed, when, withInterval } from "../src/format";

describe("format", () => {
  it("rounds and marks missing values", () => {
    expect(fixed(0.71234)).toBe("0.712");
    expect(fixed(null)).toBe("—");
    expect(fixed(Number.NaN)).toBe("—");
    expect(interval([0.1, 0.25])).toBe("[0.100, 0.250]");
    expect(ms(812)).toBe("812.0 ms");
    expect(ms(41386)).toBe("41.4 s");
    expect(count(1, "question")).toBe("1 question");
    expect(count(0, "document")).toBe("0 documents");
  });
  it("signs differences", () => {
    expect(signed(0.05)).toBe("+0.050");
    expect(signed(-0.05)).toBe("-0.050");
    expect(signed(0)).toBe("0.000");
  });
  it("shows a metric no pair has as a dash, not an error", () => {
    // The core's JSON for a metric with no paired questions (e.g. citations when one run cites nothing).
    expect(signed(null)).toBe("—");
    expect(interval([null, null])).toBe("—");
    expect(interval(null)).toBe("—");
    // One dash for a row with no value, not one for the value and one for its interval.
    expect(withInterval(null, [null, null], signed)).toBe("—");
    expect(withInterval(0.25, [0.1, 0.4], signed)).toBe("+0.250 [0.100, 0.400]");
    expect(withInterval(0.25, null)).toBe("0.250 —");
  });
  it("writes durations and times for people", () => {
    expect(duration(42.4)).toBe("42 s");
    expect(duration(125)).toBe("2 min 5 s");
    expect(duration(null)).toBe("—");
    expect(duration(Number.POSITIVE_INFINITY)).toBe("—");
    expect(when("2026-11-23T00:48:37.558771304Z")).toBe("2026-11-23 00:48:37 UTC");
  });
});
