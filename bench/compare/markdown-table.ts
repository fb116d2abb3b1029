/** A Markdown table with padded columns (the layout the repository's formatter keeps). */
export function markdownTable(header: string[], rows: string[][]): string[] {
  const widths = header.map((cell, c) =>
    Math.max(3, cell.length, ...rows.map((row) => (row[c] ?? "").length)),
  );
  const line = (cells: string[]) => `| ${widths.map((w, c) => (cells[c] ?? "").padEnd(w)).join(" | ")} |`;
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)];
}
