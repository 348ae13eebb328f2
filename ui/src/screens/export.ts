// Export: the core writes HTML, Markdown, CSV, JSON or JUnit to a file chosen in a save dialog.
import { api, errorText } from "../api";
import { h, append } from "../dom";

const formats = [
  { id: "html", label: "HTML (one self-contained file)", ext: "html" },
  { id: "md", label: "Markdown", ext: "md" },
  { id: "csv", label: "CSV", ext: "csv" },
  { id: "json", label: "JSON (the documented schema)", ext: "json" },
  { id: "junit", label: "JUnit XML", ext: "xml" },
];

export async function renderExport(area: HTMLElement, runs: string[]): Promise<void> {
  append(area, h("h1", {}, "Export"));
  const all = await api.listRuns().catch(() => []);
  const names = runs.map((id) => all.find((r) => r.id === id)?.name ?? id);
  if (runs.length === 0) {
    append(area, h("p", { class: "muted" }, "Tick runs in the Runs list (or open a run) first."));
    return;
  }
  append(area, h("p", {}, `Runs: ${names.join(", ")}`));
  const format = h("select", { id: "export-format" }, ...formats.map((f) => h("option", { value: f.id }, f.label)));
  const status = h("p", { id: "export-status", "aria-live": "polite" });
  const button = h("button", {
    id: "export-go",
    onclick: async () => {
      const chosen = formats.find((f) => f.id === format.value) ?? formats[0];
      status.className = "";
      try {
        const path = await api.chooseSavePath("Export report", `assay-report.${chosen.ext}`, chosen.label, [chosen.ext]);
        if (!path) return;
        const written = await api.exportReport(runs, chosen.id, path);
        status.textContent = `Written: ${written}`;
      } catch (e) {
        status.className = "error";
        status.textContent = errorText(e);
      }
    },
  }, "Export…");
  const quick = h("button", {
    id: "export-data-dir",
    onclick: async () => {
      const chosen = formats.find((f) => f.id === format.value) ?? formats[0];
      status.className = "";
      try {
        status.textContent = `Written: ${await api.exportReport(runs, chosen.id, null)}`;
      } catch (e) {
        status.className = "error";
        status.textContent = errorText(e);
      }
    },
  }, "Save to the reports folder");
  append(area, h("div", { class: "form" }, h("label", {}, "Format ", format), button, quick), status);
}
