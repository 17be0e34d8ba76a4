// Throughput over time on the queues page: per queue, jobs completed and attempts failed per
// bucket (bars), and the run time p50–p95 of the attempts that ended (a range per bucket), over
// the last hour (minutes) or the last day (hours). Loaded before app.js, whose helpers (el,
// api, $) it uses at call time. Charts are built with DOM calls: queue names reach the page as
// text nodes and attributes, never as markup.
'use strict';

const SVG_NS = 'http://www.w3.org/2000/svg';
const CHART = { width: 360, height: 96, left: 44, right: 6, top: 8, bottom: 18 };

function svgEl(tag, attributes = {}, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}

function throughputWindow() {
  const checked = document.querySelector('input[name="throughput-window"]:checked');
  return checked ? checked.value : '1h';
}

function msText(ms) {
  if (ms === null) return '—';
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(ms < 10000 ? 2 : 1)} s`;
  return duration(ms);
}

/** A bucket's start as the axis and tooltips show it: the time, and the day for hours. */
function bucketLabel(iso, bucketMs) {
  const options = bucketMs >= 3600000 ? { weekday: 'short', hour: '2-digit', minute: '2-digit' } : { hour: '2-digit', minute: '2-digit' };
  return new Date(iso).toLocaleString(undefined, { ...options, hour12: false });
}

/** The frame of a chart: its box, its largest value on the left, first and last bucket below. */
function chartFrame(label, view, maxText) {
  const { width, height, left, bottom } = CHART;
  const svg = svgEl('svg', { viewBox: `0 0 ${width} ${height}`, width, height, role: 'img', 'aria-label': label, class: 'tp-chart' });
  svg.append(
    svgEl('title', {}, label),
    svgEl('line', { x1: left, y1: height - bottom, x2: width - CHART.right, y2: height - bottom, stroke: '#d1d9e0' }),
    svgEl('text', { x: left - 4, y: CHART.top + 8, 'text-anchor': 'end', class: 'tp-axis' }, maxText),
    svgEl('text', { x: left - 4, y: height - bottom, 'text-anchor': 'end', class: 'tp-axis' }, '0'),
    svgEl('text', { x: left, y: height - 4, class: 'tp-axis' }, bucketLabel(view.buckets[0], view.bucketMs)),
    svgEl('text', { x: width - CHART.right, y: height - 4, 'text-anchor': 'end', class: 'tp-axis' }, 'now'),
  );
  return svg;
}

function slot(i, count) {
  const w = (CHART.width - CHART.left - CHART.right) / count;
  return { x: CHART.left + i * w, w };
}

/** Bars per bucket: completed (green) on top of failed (red). */
function jobsChart(q, view, unit) {
  const total = q.completed.reduce((a, b) => a + b, 0);
  const failed = q.failed.reduce((a, b) => a + b, 0);
  const max = Math.max(1, ...q.completed.map((c, i) => c + q.failed[i]));
  const svg = chartFrame(`${q.queue}: ${total} completed, ${failed} failed, per ${unit}`, view, `${max}/${unit}`);
  const plot = CHART.height - CHART.top - CHART.bottom;
  const base = CHART.height - CHART.bottom;
  q.completed.forEach((completed, i) => {
    const fail = q.failed[i];
    if (completed + fail === 0) return;
    const { x, w } = slot(i, view.buckets.length);
    const hFail = (fail / max) * plot;
    const hDone = (completed / max) * plot;
    const text = `${bucketLabel(view.buckets[i], view.bucketMs)}: ${completed} completed, ${fail} failed (${q.retried[i]} retried, ${q.dead[i]} dead)`;
    svg.append(
      svgEl(
        'g',
        { class: 'tp-bucket', 'data-bucket': view.buckets[i], 'data-completed': completed, 'data-failed': fail },
        svgEl('title', {}, text),
        svgEl('rect', { x: x + 0.5, y: base - hFail, width: Math.max(1, w - 1), height: hFail, fill: '#cf222e' }),
        svgEl('rect', { x: x + 0.5, y: base - hFail - hDone, width: Math.max(1, w - 1), height: hDone, fill: '#1a7f37' }),
      ),
    );
  });
  return svg;
}

/** Per bucket with attempts: a line from p50 to p95, a dot at p50. */
function runTimeChart(q, view) {
  const known = q.p95Ms.filter((v) => v !== null);
  const max = Math.max(1, ...known);
  const svg = chartFrame(`${q.queue}: run time of the attempts that ended, p50 to p95`, view, msText(max));
  const plot = CHART.height - CHART.top - CHART.bottom;
  const y = (ms) => CHART.height - CHART.bottom - (ms / max) * plot;
  q.p50Ms.forEach((p50, i) => {
    if (p50 === null) return;
    const p95 = q.p95Ms[i];
    const { x, w } = slot(i, view.buckets.length);
    const cx = x + w / 2;
    const text = `${bucketLabel(view.buckets[i], view.bucketMs)}: ${q.attempts[i]} attempts ended, p50 ${msText(p50)}, p95 ${msText(p95)}`;
    svg.append(
      svgEl(
        'g',
        { class: 'tp-bucket', 'data-bucket': view.buckets[i], 'data-p50': p50, 'data-p95': p95, 'data-attempts': q.attempts[i] },
        svgEl('title', {}, text),
        svgEl('line', { x1: cx, y1: y(p50), x2: cx, y2: Math.min(y(p95), y(p50) - 1), stroke: '#0969da', 'stroke-width': Math.max(1.5, w * 0.5) }),
        svgEl('circle', { cx, cy: y(p50), r: Math.min(3, Math.max(1.5, w / 2)), fill: '#0550ae' }),
      ),
    );
  });
  return svg;
}

async function loadThroughput() {
  const view = await api(`/api/throughput?window=${throughputWindow()}`);
  const unit = view.bucketMs >= 3600000 ? 'h' : 'min';
  const rows = view.queues.map((q) => {
    const completed = q.completed.reduce((a, b) => a + b, 0);
    const retried = q.retried.reduce((a, b) => a + b, 0);
    const dead = q.dead.reduce((a, b) => a + b, 0);
    return el(
      'tr',
      { 'data-queue': q.queue },
      el(
        'td',
        { class: 'wrap' },
        el('div', {}, q.queue),
        el('div', { class: 'tp-totals small' }, `${completed} completed, ${retried + dead} failed (${retried} retried, ${dead} dead)`),
      ),
      ...(completed + retried + dead + q.attempts.reduce((a, b) => a + b, 0) === 0
        ? [el('td', { colspan: 2, class: 'muted tp-idle' }, 'idle: nothing ended in this window')]
        : [el('td', { class: 'tp-cell' }, jobsChart(q, view, unit)), el('td', { class: 'tp-cell' }, runTimeChart(q, view))]),
    );
  });
  const span = view.window === '24h' ? 'last 24 hours, per hour' : 'last hour, per minute';
  $('#throughput tbody').replaceChildren(...(rows.length ? rows : [el('tr', {}, el('td', { colspan: 3, class: 'muted' }, `nothing ended in the ${span.split(',')[0]}`))]));
  $('#throughput-note').textContent = `${span}${view.partial ? ' (at least: history read in part)' : ''}`;
}

for (const radio of document.querySelectorAll('input[name="throughput-window"]')) {
  radio.addEventListener('change', () => loadThroughput().catch((error) => flash(error.message, 'error')));
}
