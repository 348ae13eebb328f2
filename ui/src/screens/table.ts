// Keyboard navigation for tables of rows: ↑/↓ (or j/k) move, Home/End jump, Enter opens,
// Space toggles. The table is one tab stop; the current row carries aria-selected.

export function keyboardRows(
  table: HTMLTableElement,
  open: (row: HTMLTableRowElement) => void,
  toggle?: (row: HTMLTableRowElement) => void,
  onMove?: (row: HTMLTableRowElement) => void,
): { select: (index: number) => void } {
  table.tabIndex = 0;
  let current = -1;
  const rows = () => Array.from(table.tBodies[0]?.rows ?? []).filter((r) => !r.hidden);
  const select = (index: number) => {
    const list = rows();
    if (list.length === 0) return;
    current = Math.max(0, Math.min(index, list.length - 1));
    for (const r of list) r.removeAttribute("aria-selected");
    const row = list[current];
    row.setAttribute("aria-selected", "true");
    row.scrollIntoView({ block: "nearest" });
    onMove?.(row);
  };
  table.addEventListener("keydown", (e) => {
    const list = rows();
    switch (e.key) {
      case "ArrowDown": case "j": select(current + 1); break;
      case "ArrowUp": case "k": select(current - 1); break;
      case "Home": select(0); break;
      case "End": select(list.length - 1); break;
      case "Enter": if (list[current]) open(list[current]); break;
      case " ": if (toggle && list[current]) toggle(list[current]); break;
      default: return;
    }
    e.preventDefault();
  });
  table.addEventListener("focus", () => { if (current < 0) select(0); });
  return { select };
}
