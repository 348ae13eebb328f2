// Building DOM nodes. Every string child becomes a text node: model output, questions and
// manuals are untrusted and are never parsed as HTML. The core's SVG charts are the one
// exception and go through `svg()`, which parses them as XML and drops anything scriptable.

type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | boolean | number | EventListener | undefined>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === "function") el.addEventListener(key.replace(/^on/, ""), value);
    else if (value === true) el.setAttribute(key, "");
    else el.setAttribute(key, String(value));
  }
  append(el, ...children);
  return el;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
  }
}

export function clear(el: Element): void {
  while (el.firstChild) el.removeChild(el.firstChild);
}

/** A chart rendered by the core (labels escaped there), parsed as SVG, never as HTML. */
export function svg(markup: string): Node {
  const doc = new DOMParser().parseFromString(markup, "image/svg+xml");
  const root = doc.documentElement;
  if (root.nodeName !== "svg") return h("p", { class: "error" }, "chart could not be drawn");
  for (const bad of Array.from(root.querySelectorAll("script, foreignObject"))) bad.remove();
  const wrap = h("figure", { class: "chart" });
  wrap.appendChild(document.importNode(root, true));
  return wrap;
}
