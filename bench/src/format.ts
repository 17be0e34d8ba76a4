/** How the bench's reports write a figure. */
import type { Spread } from './stats.js';

export function cell(v: Spread | undefined, digits: number): string {
  if (!v) return '';
  if (v.runs.length === 1) return num(v.median, digits);
  return `${num(v.median, digits)} [${num(v.min, digits)}–${num(v.max, digits)}]`;
}

export function num(n: number | undefined, digits: number): string {
  if (n === undefined || !Number.isFinite(n)) return '–';
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export function fmtInt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

export function pct(x: number): string {
  return Number.isFinite(x) ? `${(x * 100).toFixed(x < 0.1 ? 1 : 0)}%` : '–';
}
