/** Small DOM builders of the codec demo (text only: nothing is parsed as HTML). */

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  text?: string,
  cls?: string,
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (cls) node.className = cls;
  return node;
}

/** Replaces a <dl>'s content with term/value rows (an optional class on the value). */
export function fillKv(dl: HTMLElement, rows: [string, string, string?][]): void {
  dl.replaceChildren();
  for (const [term, value, cls] of rows) dl.append(el("dt", term), el("dd", value, cls));
}
