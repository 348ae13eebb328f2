// Navigation: the routes of the app and the runs ticked in the Runs list. Screens import this
// module to move on (`go`) and never import each other or main.ts; main.ts registers the
// function that draws a route (`onNavigate`), so the import graph stays one-way.

export type Route =
  | { screen: "runs" }
  | { screen: "run"; run: string }
  | { screen: "compare"; runs: string[] }
  | { screen: "new"; resume?: { run: string; dataset: string }; dataset?: string }
  | { screen: "datasets" }
  | { screen: "models" }
  | { screen: "judges"; run: string }
  | { screen: "export"; runs: string[] };

/** Runs ticked in the Runs list, shared by Compare and Export. */
export const selection = new Set<string>();

let draw: ((route: Route) => void) | null = null;

/** main.ts hands over the function that renders a route. */
export function onNavigate(render: (route: Route) => void): void {
  draw = render;
}

export function go(route: Route): void {
  draw?.(route);
}
