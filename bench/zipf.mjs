// A seeded, skewed (Zipf-like) choice of numbers for the benches: the same stream on every run.

/** mulberry32: a small seeded generator of floats in [0, 1). */
export function seededRandom(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Shuffles `list` in place (Fisher-Yates) with `rnd`, and returns it. */
export function shuffle(list, rnd) {
  for (let i = list.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [list[i], list[j]] = [list[j], list[i]];
  }
  return list;
}

/** Returns a function picking from `ranked` with weight 1 / rank^s. */
export function zipfPicker(ranked, s, rnd) {
  const weights = ranked.map((_, k) => 1 / (k + 1) ** s);
  const total = weights.reduce((a, b) => a + b, 0);
  const cumulative = [];
  weights.reduce((sum, w, k) => (cumulative[k] = sum + w / total), 0);
  return () => {
    const u = rnd();
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid] < u) lo = mid + 1;
      else hi = mid;
    }
    return ranked[lo];
  };
}
