// The app's frame: a sidebar of screens and the screen area. Each screen module renders into
// the area; navigation (router.ts) passes what the next screen needs (a run id, selected runs).
import { h, clear } from "./dom";
import { go, onNavigate, Route, selection } from "./router";
import { renderRuns } from "./screens/runs";
import { renderRun } from "./screens/run";
import { renderCompare } from "./screens/compare";
import { renderNewRun } from "./screens/newrun";
import { renderDatasets } from "./screens/datasets";
import { renderExport } from "./screens/export";
import { renderModels } from "./screens/models";
import { renderJudges } from "./screens/judges";
import { mountJobStatus } from "./jobstatus";
import "./workbench.css";

const screens: { screen: Route["screen"]; label: string }[] = [
  { screen: "runs", label: "Runs" },
  { screen: "compare", label: "Compare" },
  { screen: "new", label: "New run" },
  { screen: "datasets", label: "Datasets" },
  { screen: "models", label: "Models" },
  { screen: "export", label: "Export" },
];

// The sidebar: the screens' buttons, redrawn on each navigation, and below them the job in
// flight, drawn once and kept (jobstatus.ts), so it is seen from every screen.
const links = h("div", { class: "nav-links" });
const jobPanel = h("section", { class: "job-status", id: "job-status", hidden: true, "aria-live": "polite" });
document.getElementById("nav")!.append(links, jobPanel);

function render(route: Route): void {
  const nav = links;
  const area = document.getElementById("screen")!;
  clear(nav);
  nav.append(h("div", { class: "brand" }, "Assay"));
  for (const s of screens) {
    const current = s.screen === route.screen || (s.screen === "runs" && route.screen === "run");
    nav.append(
      h("button", {
        class: current ? "nav current" : "nav",
        "data-screen": s.screen,
        "aria-current": current ? "page" : undefined,
        onclick: () => go(defaultRoute(s.screen)),
      }, s.label),
    );
  }
  clear(area);
  area.focus();
  switch (route.screen) {
    case "runs": return void renderRuns(area);
    case "run": return void renderRun(area, route.run);
    case "compare": return void renderCompare(area, route.runs);
    case "new": return void renderNewRun(area, route.resume, route.dataset);
    case "datasets": return void renderDatasets(area);
    case "models": return void renderModels(area);
    case "judges": return void renderJudges(area, route.run);
    case "export": return void renderExport(area, route.runs);
  }
}

function defaultRoute(screen: Route["screen"]): Route {
  switch (screen) {
    case "compare": return { screen, runs: [...selection] };
    case "export": return { screen, runs: [...selection] };
    case "run": return { screen: "runs" };
    default: return { screen } as Route;
  }
}

onNavigate(render);
void mountJobStatus(jobPanel);
go({ screen: "runs" });
