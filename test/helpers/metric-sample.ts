// One sample of a Prometheus text exposition: the value of a series written exactly as the exposition writes it.

/** The value of `series` (name and labels, e.g. `x_total{a="b"}`), or undefined when the text has no such line. */
export function sampleOf(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}
