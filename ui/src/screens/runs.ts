// Runs list: every run in the store (CLI runs included), newest first. Tick runs to compare or
// export them; Enter or a click opens one. Arrow keys move between rows. Runs whose stored row
// is damaged are listed apart with what the core found wrong, so the others still open.
// Deleting says first what goes with each run (the core's plan) and waits for a second click.
import { api, errorText, RunDeletion, RunListing, RunRecord } from "../api";
import { h, append } from "../dom";
import { when } from "../format";
import { go, selection } from "../router";
import { keyboardRows } from "./table";

export async function renderRuns(area: HTMLElement): Promise<void> {
  append(area, h("h1", {}, "Runs"));
  const dbLine = h("p", { class: "muted", id: "db-path" });
  append(area, dbLine);
  api.dbPath().then((p) => (dbLine.textContent = `Database: ${p}`)).catch(() => undefined);
  let listing: RunListing;
  try {
    listing = await api.runListing();
  } catch (e) {
    append(area, h("p", { class: "error" }, errorText(e)));
    return;
  }
  const runs: RunRecord[] = listing.runs;
  if (listing.damaged.length > 0) {
    append(area, h("section", { class: "warn", id: "damaged-runs" },
      h("p", {}, `${listing.damaged.length === 1 ? "One run" : `${listing.damaged.length} runs`} cannot be read from the database (nothing was changed):`),
      h("ul", {}, ...listing.damaged.map((d) => h("li", { "data-run": d.id },
        h("span", { class: "mono" }, d.id), d.name ? ` (${d.name})` : "",
        `: table ${d.damage.table}, row ${d.damage.row}, field ${d.damage.field} ${d.damage.problem} `,
        // A row whose id cannot be read ("rowid N") cannot be named to delete it.
        d.id.startsWith("rowid ") ? "" : h("button", { class: "delete-damaged", onclick: () => confirmDeletion(area, [d.id]) }, "Delete")))),
      ));
  }
  if (runs.length === 0) {
    append(area, h("p", {}, "No runs yet. Start one under New run, or with `assay run` on the command line."));
    return;
  }
  const actions = h("div", { class: "actions" },
    h("button", { id: "compare-selected", onclick: () => go({ screen: "compare", runs: [...selection] }) }, "Compare selected"),
    h("button", { id: "export-selected", onclick: () => go({ screen: "export", runs: [...selection] }) }, "Export selected"),
    h("button", { id: "delete-selected", onclick: () => confirmDeletion(area, [...selection]) }, "Delete selected…"),
  );
  const body = h("tbody");
  for (const run of runs) {
    const box = h("input", { type: "checkbox", "aria-label": `select ${run.name}`, checked: selection.has(run.id) });
    box.addEventListener("click", (e) => e.stopPropagation());
    box.addEventListener("change", () => (box.checked ? selection.add(run.id) : selection.delete(run.id)));
    const row = h("tr", { "data-run": run.id, tabindex: "-1" },
      h("td", {}, box),
      h("td", { class: "name" }, run.name),
      h("td", {}, run.dataset),
      h("td", {}, run.config.target),
      h("td", {}, h("span", { class: `status ${run.status}` }, run.status)),
      h("td", { class: "num" }, String(run.total_items)),
      h("td", {}, when(run.created_at)),
      h("td", { class: "mono" }, run.id),
    );
    row.addEventListener("click", () => go({ screen: "run", run: run.id }));
    body.append(row);
  }
  const table = h("table", { id: "runs-table", class: "rows" },
    h("thead", {}, h("tr", {}, ...["", "Name", "Dataset", "Target", "Status", "Items", "Created", "Id"].map((t) => h("th", {}, t)))),
    body);
  keyboardRows(table, (row) => go({ screen: "run", run: row.dataset.run! }), (row) => {
    const box = row.querySelector("input");
    if (box) { box.checked = !box.checked; box.dispatchEvent(new Event("change")); }
  });
  append(area, actions, h("div", { id: "delete-panel" }), table);
}

/** One line per run: what deleting it takes with it. */
function deletionLine(run: RunDeletion): string {
  const c = run.contents;
  const labels = c.labels > 0 ? `, ${c.labels} people's labels (export them from the run's Labels first to keep them)` : "";
  return `${run.name ?? run.id}: ${c.items} answers, ${c.verdicts} verdicts, ${c.pairwise_judgments} pairwise judgments${labels}`;
}

/** Ask the core what deleting `ids` removes, show it, and delete only on a second click. */
async function confirmDeletion(area: HTMLElement, ids: string[]): Promise<void> {
  let panel = area.querySelector<HTMLElement>("#delete-panel");
  if (!panel) {
    panel = h("div", { id: "delete-panel" });
    area.querySelector("h1")?.after(panel);
  }
  panel.replaceChildren();
  if (ids.length === 0) {
    append(panel, h("p", { class: "warn" }, "Tick the runs to delete first."));
    return;
  }
  let plan: RunDeletion[];
  try {
    plan = await api.planRunDeletion(ids);
  } catch (e) {
    append(panel, h("p", { class: "error", id: "delete-error" }, errorText(e)));
    return;
  }
  const status = h("p", { id: "delete-status" });
  const keep = h("button", { id: "delete-keep", onclick: () => panel!.replaceChildren() }, "Keep");
  const confirm = h("button", { id: "delete-confirm", class: "danger" }, plan.length === 1 ? "Delete this run" : `Delete these ${plan.length} runs`);
  confirm.addEventListener("click", async () => {
    confirm.disabled = true;
    keep.disabled = true;
    try {
      await api.deleteRuns(plan.map((r) => r.id));
      for (const run of plan) selection.delete(run.id);
      go({ screen: "runs" });
    } catch (e) {
      status.className = "error";
      status.textContent = errorText(e);
      keep.disabled = false;
    }
  });
  append(panel, h("section", { class: "delete-confirmation" },
    h("p", {}, "Deleting removes these runs and everything stored with them; it cannot be undone:"),
    h("ul", { id: "delete-plan" }, ...plan.map((run) => h("li", { "data-run": run.id }, deletionLine(run)))),
    h("div", { class: "actions" }, confirm, keep),
    status));
  confirm.focus();
}
