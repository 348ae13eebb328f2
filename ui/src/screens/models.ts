// Models: what the registry knows, whether it is installed (size, architecture, quantization,
// sha256 state), pull with progress, adding a GGUF file already on disk, and finding the models
// other tools (Ollama, LM Studio, the Hugging Face cache) hold; adding a served model and
// removing a model (each removal says first what it deletes and what it keeps).
import { open } from "@tauri-apps/plugin-dialog";
import { listen } from "@tauri-apps/api/event";
import { api, errorText, ListedModel, ModelsView, PullProgress, ScannedModel } from "../api";
import { h, append, clear } from "../dom";
import { bytes, fixed } from "../format";
import "./labelling.css";

const stateText: Record<string, string> = {
  verified: "installed · sha256 verified",
  present: "installed · sha256 checked on first use",
  corrupt: "wrong size or sha256 — pull again",
  missing: "not installed",
  served: "served (inference server)",
};

export async function renderModels(area: HTMLElement): Promise<void> {
  append(area, h("h1", {}, "Models"));
  const content = h("div", { id: "models-content" });
  const status = h("p", { id: "models-status", "aria-live": "polite" });
  append(area, status, content);
  const refresh = async () => {
    clear(content);
    try {
      draw(content, await api.listModels(), status, refresh);
    } catch (e) {
      append(content, h("p", { class: "error" }, errorText(e)));
    }
  };
  // The package being fetched, which each bytes-and-speed line repeats.
  let downloading = "";
  const stop = await listen<PullProgress>("pull-progress", ({ payload: p }) => {
    status.className = p.kind === "failed" ? "error" : "";
    switch (p.kind) {
      case "downloading": downloading = `${p.id}: downloading ${p.package} (${p.index} of ${p.count})`; status.textContent = downloading; break;
      case "transferred":
        status.textContent = `${downloading} · ${bytes(p.bytes)} of about ${bytes(p.expected)} · ${bytes(p.bytes_per_s)}/s`;
        break;
      case "assembling": status.textContent = `${p.id}: assembling and checking ${p.file}`; break;
      case "installed": status.textContent = `${p.id}: installed at ${p.path}`; void refresh(); break;
      case "failed": status.textContent = `${p.id}: ${p.message}`; break;
    }
  });
  // Stop listening once the screen is replaced.
  new MutationObserver((_, observer) => { if (!area.contains(content)) { stop(); observer.disconnect(); } })
    .observe(area, { childList: true });
  await refresh();
}

const sourceText: Record<ScannedModel["source"], string> = {
  "ollama": "Ollama", "lm-studio": "LM Studio", "hugging-face": "Hugging Face cache",
};

function outcomeText(m: ScannedModel): string {
  switch (m.outcome) {
    case "added": return `added as ${m.id}`;
    case "already-registered": return `already registered as ${m.id}`;
    case "skipped": return `skipped: ${m.reason}`;
  }
}

function scanSection(status: HTMLElement, refresh: () => Promise<void>): HTMLElement[] {
  const results = h("div", { id: "scan-results" });
  const button = h("button", { id: "models-scan", onclick: async () => {
    button.setAttribute("disabled", "");
    status.className = ""; status.textContent = "looking for models…";
    try {
      const found = await api.scanModels();
      const added = found.filter((m) => m.outcome === "added").length;
      await refresh();
      // refresh() redraws the screen: show the results in the new section.
      const target = document.getElementById("scan-results");
      if (target) drawScan(target, found);
      status.textContent = `${found.length} found, ${added} added`;
    } catch (e) {
      status.className = "error"; status.textContent = errorText(e);
    } finally {
      button.removeAttribute("disabled");
    }
  } }, "Find models");
  return [
    h("h2", {}, "Models other tools hold"),
    h("p", { class: "muted" }, "Ollama, LM Studio and the Hugging Face cache, in their usual folders: found GGUF files are registered where they are (nothing is copied)."),
    h("div", { class: "row" }, button),
    results,
  ];
}

function drawScan(target: HTMLElement, found: ScannedModel[]): void {
  clear(target);
  if (found.length === 0) {
    append(target, h("p", { class: "muted" }, "No GGUF models found."));
    return;
  }
  append(target, h("table", { class: "rows", id: "scan-table" },
    h("thead", {}, h("tr", {}, ...["source", "name", "outcome"].map((t) => h("th", {}, t)))),
    h("tbody", {}, ...found.map((m) => h("tr", { "data-outcome": m.outcome },
      h("td", {}, sourceText[m.source] ?? m.source),
      h("td", { class: "mono" }, m.name),
      h("td", { class: m.outcome === "skipped" ? "muted" : "" }, outcomeText(m)))))));
}

function draw(content: HTMLElement, view: ModelsView, status: HTMLElement, refresh: () => Promise<void>): void {
  const body = h("tbody");
  for (const m of view.models) {
    const pull = m.state === "verified" || m.state === "present" || m.state === "served" || m.source === "added locally" ? null
      : h("button", { "data-pull": m.id, onclick: async () => {
          status.className = ""; status.textContent = `${m.id}: starting…`;
          try { await api.pullModel(m.id); } catch (e) { status.className = "error"; status.textContent = errorText(e); }
        } }, "Pull");
    body.append(h("tr", { "data-model": m.id },
      h("td", { class: "mono" }, m.id),
      h("td", {}, m.arch),
      h("td", { class: "num" }, bytes(m.size)),
      h("td", {}, m.quantization ? `${m.quantization} (${fixed((m.quantization_share ?? 0) * 100, 0)}%)` : "—"),
      h("td", { class: `state ${m.state}` }, stateText[m.state] ?? m.state),
      h("td", {}, m.description),
      h("td", {}, pull, removal(m, status, refresh))));
  }
  const path = h("input", { id: "model-path", type: "text", placeholder: "a .gguf file on this computer" });
  append(content,
    h("p", { class: "muted" }, `Models folder: ${view.models_dir}`),
    h("table", { class: "rows", id: "models-table" },
      h("thead", {}, h("tr", {}, ...["id", "arch", "size", "quantization", "state", "description", ""].map((t) => h("th", {}, t)))), body),
    h("h2", {}, "Add a local GGUF"),
    h("div", { class: "row" }, path,
      h("button", { onclick: async () => { const p = await open({ filters: [{ name: "GGUF", extensions: ["gguf"] }] }); if (typeof p === "string") path.value = p; } }, "Browse…"),
      h("button", { id: "model-add", onclick: async () => {
        try { status.className = ""; status.textContent = `added ${await api.addModel(path.value.trim())}`; } catch (e) { status.className = "error"; status.textContent = errorText(e); }
      } }, "Add")),
    ...serverSection(status, refresh),
    ...scanSection(status, refresh));
}

/** What removing a model does, said before it is done (the core does the same, `assay models remove`). */
function removalText(m: ListedModel): string | null {
  if (m.state === "served") return `Forget the served model ${m.id}? The server itself is not touched.`;
  if (m.source === "added locally") return `Remove ${m.id} from the list? Its file stays where it is: ${m.path}`;
  if (m.state === "missing") return null;
  return `Delete ${m.id}'s downloaded files (${bytes(m.size)}) from the models folder? Pull installs it again.`;
}

/** A Remove button that asks in place (no native dialog) before removing. */
function removal(m: ListedModel, status: HTMLElement, refresh: () => Promise<void>): HTMLElement | null {
  const question = removalText(m);
  if (!question) return null;
  const box = h("span", { class: "remove" });
  const ask = h("button", { "data-remove": m.id, onclick: () => {
    clear(box);
    append(box, h("span", { class: "confirm-text" }, question),
      h("button", { "data-confirm-remove": m.id, onclick: async () => {
        try {
          status.className = ""; status.textContent = await api.removeModel(m.id);
          await refresh();
        } catch (e) { status.className = "error"; status.textContent = errorText(e); }
      } }, "Remove"),
      h("button", { onclick: () => { clear(box); box.append(ask); } }, "Cancel"));
  } }, "Remove…");
  box.append(ask);
  return box;
}

/** Register a model an inference server serves (llama-server, vLLM, Ollama, LM Studio). */
function serverSection(status: HTMLElement, refresh: () => Promise<void>): HTMLElement[] {
  const field = (id: string, label: string, placeholder: string) => {
    const input = h("input", { id, type: "text", placeholder });
    return { input, label: h("label", {}, label, input) };
  };
  const id = field("server-id", "Id ", "e.g. qwen-7b-server");
  const url = field("server-url", "API root ", "http://127.0.0.1:8080/v1");
  const served = field("server-model", "Model name on the server ", "as the server expects it");
  const key = field("server-key-env", "API key variable ", "optional, e.g. OPENAI_API_KEY");
  return [
    h("h2", {}, "Add a served model"),
    h("p", { class: "muted" }, "An OpenAI-compatible server's model, usable as generator and judge. Several API roots (comma-separated) are replicas. The key itself is never stored: name the environment variable that holds it."),
    h("div", { class: "form server-form" }, id.label, url.label, served.label, key.label,
      h("button", { id: "server-add", onclick: async () => {
        try {
          const urls = url.input.value.split(",");
          const added = await api.addServer(id.input.value, urls, served.input.value, key.input.value || null);
          await refresh();
          status.className = ""; status.textContent = `added served model ${added}`;
        } catch (e) { status.className = "error"; status.textContent = errorText(e); }
      } }, "Add served model")),
  ];
}
