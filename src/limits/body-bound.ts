// The bound of a request's body: what the app's body limit enforces and what Node's `Expect: 100-continue` answer
// asks before the body is sent, with the one message both refuse with.

/** The bound of a request's body by its path (REQUEST_MAX_BODY_BYTES, or a route's own larger bound). */
export type BodyBoundOf = (path: string) => number;

export function tooLargeMessage(maxBytes: number): string {
  return `The request body may hold at most ${maxBytes} bytes.`;
}
