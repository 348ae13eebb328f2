// Models: what the registry knows, whether it is installed (size, architecture, quantization,
// sha256 state), pull with progress, and adding a GGUF file already on disk.
import { open } from "@tauri-apps/plugin-dialog";
import { listen } from "@tauri-apps/api/event";
import { api, errorText, ModelsView, PullProgress } from "../api";
import { h, append, clear } from "../dom";
import { bytes, fixed } from "../format";

const stateText: Record<string, string> = {
  verified: "installed · sha256 verified",
  present: "installed · sha256 checked on first use",
  corrupt: "wrong size or sha256 — pull again",
  missing: "not installed",
};

export async function renderModels(area: HTMLElement): Promise<void> {
  append(area, h("h1", {}, "Models"));
  const content = h("div", { id: "models-content" });
  const status = h("p", { id: "models-status", "aria-live": "polite" });
  append(area, status, content);
  const refresh = async () => {
    clear(content);
    try {
      draw(content, await api.listModels(), status);
    } catch (e) {
      append(content, h("p", { class: "error" }, errorText(e)));
    }
  };
  const stop = await listen<PullProgress>("pull-progress", ({ payload: p }) => {
    status.className = p.kind === "failed" ? "error" : "";
    switch (p.kind) {
      case "downloading": status.textContent = `${p.id}: downloading ${p.package} (${p.index} of ${p.count})`; break;
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

function draw(content: HTMLElement, view: ModelsView, status: HTMLElement): void {
  const body = h("tbody");
  for (const m of view.models) {
    const pull = m.state === "verified" || m.state === "present" || m.source === "added locally" ? null
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
      h("td", {}, pull)));
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
      } }, "Add")));
}
