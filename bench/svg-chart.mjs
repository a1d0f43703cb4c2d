// A dependency-free SVG line chart: panels stacked on one time axis, each with its own y scale and series.
// Used by bench/series.mjs for the README's Performance picture.

const esc = (s) => String(s).replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

/** A "nice" upper bound and tick step for values up to `max`. */
function niceScale(max, ticks = 4) {
  if (!(max > 0)) return { top: 1, step: 0.25 };
  const raw = max / ticks;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((s) => s >= raw);
  return { top: step * Math.ceil(max / step), step };
}

/**
 * @param {{ title: string, subtitle?: string, xLabel: string, x: number[],
 *   panels: { title: string, unit: string, max?: number, series: { name: string, color: string, values: number[] }[] }[] }} chart
 * @returns {string} the SVG document
 */
export function renderChart(chart) {
  const width = 800;
  const left = 64;
  const right = 150;
  const panelHeight = 150;
  const gap = 46;
  const top = chart.subtitle ? 62 : 44;
  const plotWidth = width - left - right;
  const height = top + chart.panels.length * (panelHeight + gap) + 10;
  const xMax = Math.max(...chart.x);
  const xMin = Math.min(...chart.x);
  const px = (x) => left + ((x - xMin) / (xMax - xMin || 1)) * plotWidth;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, -apple-system, 'Segoe UI', Roboto, Arial, sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="${left}" y="24" font-size="16" font-weight="600" fill="#1b2330">${esc(chart.title)}</text>`,
  ];
  if (chart.subtitle) out.push(`<text x="${left}" y="44" fill="#5b6677">${esc(chart.subtitle)}</text>`);

  chart.panels.forEach((panel, i) => {
    const y0 = top + i * (panelHeight + gap) + 18;
    const all = panel.series.flatMap((s) => s.values.filter(Number.isFinite));
    const { top: yTop, step } = niceScale(panel.max ?? Math.max(...all, 0));
    const py = (v) => y0 + panelHeight - (v / yTop) * panelHeight;
    out.push(`<text x="${left}" y="${y0 - 6}" font-weight="600" fill="#1b2330">${esc(panel.title)}</text>`);
    for (let v = 0; v <= yTop + 1e-9; v += step) {
      const y = py(v).toFixed(1);
      out.push(`<line x1="${left}" x2="${left + plotWidth}" y1="${y}" y2="${y}" stroke="#e3e8ef"/>`);
      out.push(
        `<text x="${left - 6}" y="${y}" text-anchor="end" dominant-baseline="middle" fill="#5b6677">${esc(`${+v.toFixed(3)}${panel.unit}`)}</text>`,
      );
    }
    out.push(`<line x1="${left}" x2="${left + plotWidth}" y1="${py(0)}" y2="${py(0)}" stroke="#8a9ab3"/>`);
    panel.series.forEach((s, k) => {
      const points = chart.x
        .map((x, j) => [x, s.values[j]])
        .filter(([, v]) => Number.isFinite(v))
        .map(([x, v]) => `${px(x).toFixed(1)},${py(Math.min(v, yTop)).toFixed(1)}`);
      out.push(
        `<polyline fill="none" stroke="${s.color}" stroke-width="2" stroke-linejoin="round" points="${points.join(' ')}"/>`,
      );
      const ly = y0 + 14 + k * 18;
      out.push(
        `<line x1="${left + plotWidth + 14}" x2="${left + plotWidth + 34}" y1="${ly}" y2="${ly}" stroke="${s.color}" stroke-width="3"/>`,
      );
      out.push(
        `<text x="${left + plotWidth + 40}" y="${ly}" dominant-baseline="middle" fill="#1b2330">${esc(s.name)}</text>`,
      );
    });
    const labelEvery = Math.max(1, Math.round((xMax - xMin) / 10));
    for (let x = xMin; x <= xMax; x += labelEvery) {
      out.push(
        `<text x="${px(x).toFixed(1)}" y="${y0 + panelHeight + 14}" text-anchor="middle" fill="#5b6677">${x}</text>`,
      );
    }
  });
  out.push(
    `<text x="${left + plotWidth / 2}" y="${height - 6}" text-anchor="middle" fill="#5b6677">${esc(chart.xLabel)}</text>`,
  );
  out.push('</svg>');
  return out.join('\n') + '\n';
}
