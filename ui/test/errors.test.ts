import { describe, expect, it } from "vitest";
import { explainError, missingField } from "../src/errors";

describe("errors a person can act on", () => {
  it("names the field whose path the core's message names, and says what to do for os error 2", () => {
    const fields = [
      { label: "Dataset folder", value: "/data/trailgear" },
      { label: "Answers file (JSONL)", value: "/data/trailgear/answers.jsonl" },
    ];
    expect(explainError("/data/trailgear/answers.jsonl: No such file or directory (os error 2)", fields))
      .toBe("Answers file (JSONL): /data/trailgear/answers.jsonl: not found: check the path or choose it with Browse…");
    expect(explainError("/data/trailgear: not a dataset folder (no dataset.toml)", fields))
      .toBe("Dataset folder: /data/trailgear: not a dataset folder (no dataset.toml)");
  });
  it("keeps a message that names no field", () => {
    expect(explainError("a run is already in progress", [{ label: "Name", value: "x" }])).toBe("a run is already in progress");
  });
  it("names the first empty required field", () => {
    expect(missingField([{ label: "File", value: "a" }, { label: "Output folder", value: " " }]))
      .toBe("Output folder: empty; choose it with Browse…");
    expect(missingField([{ label: "File", value: "a" }])).toBeNull();
  });
});
