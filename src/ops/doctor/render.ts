import type { DoctorReport } from "./runner.js";

/**
 * The table `labphi doctor` prints: PART, CHECK, STATUS, DETAIL, and under each failed row its
 * fix. Long details wrap at `width` columns, aligned under DETAIL.
 */

function wrap(text: string, width: number): string[] {
  if (width < 20 || text.length <= width) return [text];
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

export function renderTable(report: DoctorReport, width = 120): string {
  const rows = report.checks;
  const wPart = Math.max(4, ...rows.map((r) => r.part.length));
  const wCheck = Math.max(5, ...rows.map((r) => r.check.length));
  const wStatus = 7;
  const indent = wPart + wCheck + wStatus + 6;
  const room = Math.max(40, width - indent);
  const pad = " ".repeat(indent);
  const out: string[] = [];
  out.push(`${"PART".padEnd(wPart)}  ${"CHECK".padEnd(wCheck)}  ${"STATUS".padEnd(wStatus)}  DETAIL`);
  for (const r of rows) {
    const detail = wrap(r.detail, room);
    out.push(`${r.part.padEnd(wPart)}  ${r.check.padEnd(wCheck)}  ${r.status.padEnd(wStatus)}  ${detail[0] ?? ""}`);
    for (const more of detail.slice(1)) out.push(pad + more);
    if (r.fix) {
      const fix = wrap(`fix: ${r.fix}`, room);
      for (const line of fix) out.push(pad + line);
    }
  }
  const c = report.counts;
  out.push("");
  if (report.rails.length > 0) {
    const on = report.rails.filter((r) => r.configured).map((r) => r.id);
    out.push(
      `rails configured: ${on.length > 0 ? on.join(", ") : 'none (docs/payments.md, "When is a rail configured")'}`,
    );
  }
  out.push(
    `${c.ok} ok, ${c.fail} failed, ${c.skipped} skipped: ${report.ok ? "every configured part works" : "fix the failed rows and run labphi doctor again"}`,
  );
  return `${out.join("\n")}\n`;
}
