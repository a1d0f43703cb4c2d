// Per-minute counts in tests: keeping a test's requests inside one clock minute.

/** Waits out the last seconds of a clock minute, so a per-minute count does not roll over mid-test. */
export async function awayFromMinuteEnd(): Promise<void> {
  const into = Date.now() % 60_000;
  if (into > 55_000) await new Promise((r) => setTimeout(r, 60_000 - into + 50));
}
