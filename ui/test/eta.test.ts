import { describe, expect, it } from "vitest";
import { liveEta } from "../src/eta";

describe("the live ETA", () => {
  it("is remaining items at the moving rate right after an item finished", () => {
    // 4 items in 8 s: 2 s each; 5 to go.
    expect(liveEta(5, 4, 8, 0)).toBeCloseTo(10);
  });
  it("counts down while the item under way keeps pace", () => {
    expect(liveEta(5, 4, 8, 1)).toBeCloseTo(9);
    expect(liveEta(5, 4, 8, 2)).toBeCloseTo(8);
  });
  it("grows, never freezes, while an item takes longer than the average", () => {
    const at = [3, 10, 60].map((s) => liveEta(5, 4, 8, s)!);
    // (8 + s) / 5 per item for the 4 items after the current one.
    expect(at[0]).toBeCloseTo(4 * (11 / 5));
    expect(at[1]).toBeGreaterThan(at[0]);
    expect(at[2]).toBeGreaterThan(at[1]);
  });
  it("is continuous where the item under way passes the average", () => {
    expect(liveEta(5, 4, 8, 2 - 1e-9)).toBeCloseTo(liveEta(5, 4, 8, 2 + 1e-9)!);
  });
  it("has nothing to go on before the first item, and nothing left at the end", () => {
    expect(liveEta(5, 0, 0, 3)).toBeNull();
    expect(liveEta(0, 4, 8, 3)).toBe(0);
  });
});
