// Random trace and span ids (W3C Trace Context section 3.2.2.3), drawn when asked: workerd refuses randomness at
// a module's top level, so nothing here runs before the first span.

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

function randomHex(bytes: number): string {
  const buffer = crypto.getRandomValues(new Uint8Array(bytes));
  let hex = '';
  for (const byte of buffer) hex += HEX[byte];
  // An all-zero id is invalid; one in 2^64 draws, so drawing again costs nothing in practice.
  return /^0+$/.test(hex) ? randomHex(bytes) : hex;
}

/** 32 lowercase hex digits, not all zero. */
export const newTraceId = (): string => randomHex(16);

/** 16 lowercase hex digits, not all zero. */
export const newSpanId = (): string => randomHex(8);
