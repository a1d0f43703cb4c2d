// A tracing's drop counts as a test compares them: only the causes that counted anything.

/** The causes a tracing's drop counts name at all, e.g. `{ refused: 4 }` (`{}`: nothing dropped). */
export const droppedBy = (dropped: Readonly<Record<string, number>>): Record<string, number> =>
  Object.fromEntries(Object.entries(dropped).filter(([, count]) => count > 0));
