/** A grouped bar chart as a standalone SVG: throughput by concurrency, one bar per system. */

export interface ChartSeries {
  name: string;
  color: string;
  /** By group label; missing → no bar. */
  values: Record<string, { median: number; min: number; max: number } | undefined>;
}

export function barChartSvg(title: string, yLabel: string, groups: string[], series: ChartSeries[]): string {
  const width = 720;
  const height = 400;
  const m = { top: 48, right: 20, bottom: 64, left: 76 };
  const plotW = width - m.left - m.right;
  const plotH = height - m.top - m.bottom;
  const maxValue = Math.max(1, ...series.flatMap((s) => Object.values(s.values).map((v) => v?.max ?? 0)));
  const step = niceStep(maxValue / 5);
  const yMax = Math.ceil(maxValue / step) * step;
  const y = (v: number) => m.top + plotH - (v / yMax) * plotH;
  const groupW = plotW / Math.max(1, groups.length);
  const barW = Math.min(64, (groupW * 0.75) / Math.max(1, series.length));
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="12">`);
  out.push(`<rect width="${width}" height="${height}" fill="#ffffff"/>`);
  out.push(`<text x="${width / 2}" y="24" text-anchor="middle" font-size="15" font-weight="bold">${esc(title)}</text>`);
  for (let v = 0; v <= yMax + 1e-9; v += step) {
    out.push(`<line x1="${m.left}" x2="${width - m.right}" y1="${y(v)}" y2="${y(v)}" stroke="#e3e3e3"/>`);
    out.push(`<text x="${m.left - 8}" y="${y(v) + 4}" text-anchor="end" fill="#555">${v.toLocaleString('en-US')}</text>`);
  }
  out.push(`<text transform="translate(18 ${m.top + plotH / 2}) rotate(-90)" text-anchor="middle" fill="#333">${esc(yLabel)}</text>`);
  groups.forEach((group, gi) => {
    const gx = m.left + gi * groupW + (groupW - barW * series.length) / 2;
    series.forEach((s, si) => {
      const v = s.values[group];
      if (!v) return;
      const x = gx + si * barW;
      out.push(`<rect x="${x + 2}" y="${y(v.median)}" width="${barW - 4}" height="${y(0) - y(v.median)}" fill="${s.color}"><title>${esc(`${s.name}, ${group}: ${Math.round(v.median)} (${Math.round(v.min)}–${Math.round(v.max)})`)}</title></rect>`);
      // The run-to-run range as a whisker.
      const cx = x + barW / 2;
      out.push(`<line x1="${cx}" x2="${cx}" y1="${y(v.min)}" y2="${y(v.max)}" stroke="#222" stroke-width="1.2"/>`);
      out.push(`<line x1="${cx - 5}" x2="${cx + 5}" y1="${y(v.max)}" y2="${y(v.max)}" stroke="#222" stroke-width="1.2"/>`);
      out.push(`<line x1="${cx - 5}" x2="${cx + 5}" y1="${y(v.min)}" y2="${y(v.min)}" stroke="#222" stroke-width="1.2"/>`);
      out.push(`<text x="${cx}" y="${y(v.max) - 6}" text-anchor="middle" fill="#222" font-size="11">${Math.round(v.median).toLocaleString('en-US')}</text>`);
    });
    out.push(`<text x="${m.left + gi * groupW + groupW / 2}" y="${m.top + plotH + 20}" text-anchor="middle" fill="#333">${esc(group)}</text>`);
  });
  out.push(`<line x1="${m.left}" x2="${width - m.right}" y1="${y(0)}" y2="${y(0)}" stroke="#333"/>`);
  const legendY = height - 18;
  let lx = m.left;
  for (const s of series) {
    out.push(`<rect x="${lx}" y="${legendY - 10}" width="12" height="12" fill="${s.color}"/>`);
    out.push(`<text x="${lx + 18}" y="${legendY}" fill="#333">${esc(s.name)}</text>`);
    lx += 30 + s.name.length * 7.5;
  }
  out.push(`<text x="${width - m.right}" y="${legendY}" text-anchor="end" fill="#777" font-size="11">bars: median; whiskers: min–max of the runs</text>`);
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

function niceStep(raw: number): number {
  const pow = 10 ** Math.floor(Math.log10(raw));
  for (const f of [1, 2, 2.5, 5, 10]) if (f * pow >= raw) return f * pow;
  return 10 * pow;
}

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
