/**
 * `GET /Channels/{id}/Chart`: an SVG of a channel's readings over a range, with, for a thickness
 * channel, its minimum required thickness and the projected line to retirement. Drawn from at most
 * {@link MAX_POINTS} points: a longer range is drawn from its daily averages (the series' rollups).
 */
import type { ThicknessAnalysis } from "./analysis";

export const MAX_POINTS = 2000;
const W = 800;
const H = 400;
const PAD = { left: 60, right: 20, top: 30, bottom: 40 };

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
const fmt = (n: number) => (Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 10 ? n.toFixed(1) : n.toFixed(2));

export function chartSvg(
  title: string,
  unit: string,
  points: readonly { ts: number; value: number }[],
  analysis: ThicknessAnalysis | null,
): string {
  const retirement = analysis?.retirementDate ? Date.parse(analysis.retirementDate) : null;
  const tmin = analysis?.minimumThickness ?? null;
  const times = points.map((p) => p.ts);
  const values = points.map((p) => p.value);
  if (retirement !== null) times.push(retirement);
  if (tmin !== null) values.push(tmin);
  const t0 = Math.min(...times);
  const t1 = Math.max(...times);
  const v0 = Math.min(...values);
  const v1 = Math.max(...values);
  const spanT = t1 - t0 || 1;
  const spanV = v1 - v0 || Math.abs(v1) || 1;
  const x = (t: number) => PAD.left + ((t - t0) / spanT) * (W - PAD.left - PAD.right);
  const y = (v: number) => H - PAD.bottom - ((v - (v0 - spanV * 0.05)) / (spanV * 1.1)) * (H - PAD.top - PAD.bottom);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<title>${esc(title)}</title>`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    `<text x="${PAD.left}" y="18" font-size="14">${esc(title)} (${esc(unit)})</text>`,
    `<line x1="${PAD.left}" y1="${H - PAD.bottom}" x2="${W - PAD.right}" y2="${H - PAD.bottom}" stroke="#888"/>`,
    `<line x1="${PAD.left}" y1="${PAD.top}" x2="${PAD.left}" y2="${H - PAD.bottom}" stroke="#888"/>`,
  ];
  for (let i = 0; i <= 4; i++) {
    const v = v0 + (spanV * i) / 4;
    parts.push(`<text x="${PAD.left - 6}" y="${y(v) + 4}" text-anchor="end">${fmt(v)}</text>`);
    const t = t0 + (spanT * i) / 4;
    parts.push(`<text x="${x(t)}" y="${H - PAD.bottom + 16}" text-anchor="middle">${new Date(t).toISOString().slice(0, 10)}</text>`);
  }
  if (tmin !== null) {
    parts.push(
      `<line class="minimum" x1="${PAD.left}" y1="${y(tmin)}" x2="${W - PAD.right}" y2="${y(tmin)}" stroke="#c00" stroke-dasharray="6 4"/>`,
    );
    parts.push(`<text x="${W - PAD.right}" y="${y(tmin) - 4}" text-anchor="end" fill="#c00">minimum ${fmt(tmin)}</text>`);
  }
  if (points.length > 0) {
    const line = points.map((p) => `${x(p.ts).toFixed(1)},${y(p.value).toFixed(1)}`).join(" ");
    parts.push(`<polyline class="readings" points="${line}" fill="none" stroke="#1f5fa8" stroke-width="1.5"/>`);
    if (points.length <= 200)
      for (const p of points) parts.push(`<circle cx="${x(p.ts).toFixed(1)}" cy="${y(p.value).toFixed(1)}" r="3" fill="#1f5fa8"/>`);
  }
  if (analysis && retirement !== null && tmin !== null) {
    const last = analysis.last;
    parts.push(
      `<line class="projection" x1="${x(last.timestamp)}" y1="${y(last.value)}" x2="${x(retirement)}" y2="${y(tmin)}" ` +
        `stroke="#e08000" stroke-dasharray="3 3"/>`,
    );
    const label = `retirement ${analysis.retirementDate!.slice(0, 10)}`;
    parts.push(`<text x="${x(retirement)}" y="${y(tmin) + 16}" text-anchor="end" fill="#e08000">${label}</text>`);
  }
  if (points.length === 0) parts.push(`<text x="${W / 2}" y="${H / 2}" text-anchor="middle">No readings in this range</text>`);
  parts.push("</svg>");
  return parts.join("\n");
}
