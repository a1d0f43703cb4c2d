// A JSON text read for a refusal that names places, never content: a syntax error by its line and column (JSON.parse's
// own message quotes the text around it), a key given twice in one object refused (JSON.parse keeps the last one
// silently), nesting past what any document needs refused, and any place in the document found again by its path.
// jsonc-parser reads the text with comments and trailing commas refused; JSON.parse builds the value.
import { findNodeAtLocation, parseTree, printParseErrorCode, visit, type Node, type ParseError } from 'jsonc-parser';

const STRICT = { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false };

type JsonPath = readonly PropertyKey[];

type JsonText =
  | {
      ok: true;
      value: unknown;
      /** `line L, column C` of the value at `path`, or of the nearest one above it that is there. */
      placeOf(path: JsonPath): string;
      /** `line L, column C` of the key `key` in the object at `path`. */
      placeOfKey(path: JsonPath, key: string): string;
    }
  | { ok: false; problem: string };

/** `line L, column C` (both from 1) of a character of `text`; a line ends as JSON's white space ends one. */
function placeAt(text: string, offset: number): string {
  const breaks = [...text.slice(0, offset).matchAll(/\r\n?|\n/g)];
  const last = breaks.at(-1);
  const lineStart = last === undefined ? 0 : last.index + last[0].length;
  return `line ${breaks.length + 1}, column ${offset - lineStart + 1}`;
}

/** "CommaExpected" → "comma expected". */
const wordsOf = (error: ParseError['error']) =>
  printParseErrorCode(error)
    .replace(/(?!^)([A-Z])/g, ' $1')
    .toLowerCase();

/** Deeper than any document the gateway reads; refused before the tree that places a schema error is built. */
const MAX_DEPTH = 64;

/** The first problem of a strict JSON text, by its place: a syntax error, a key given twice, nesting too deep. */
function problemOf(text: string): string | undefined {
  let problem: string | undefined;
  const objects: Set<string>[] = [];
  let depth = 0;
  const at = (line: number, column: number) => `at line ${line + 1}, column ${column + 1}`;
  const enter = (_offset: number, _length: number, line: number, column: number) => {
    if (++depth > MAX_DEPTH) problem ??= `nests deeper than ${MAX_DEPTH} levels (${at(line, column)})`;
  };
  const leave = () => void depth--;
  visit(
    text,
    {
      onArrayBegin: enter,
      onArrayEnd: leave,
      onObjectBegin(offset, length, line, column) {
        enter(offset, length, line, column);
        objects.push(new Set());
      },
      onObjectEnd() {
        leave();
        objects.pop();
      },
      onObjectProperty(key, _offset, _length, line, column) {
        const seen = objects.at(-1)!;
        if (seen.has(key)) problem ??= `gives a key twice in one object (${at(line, column)})`;
        seen.add(key);
      },
      onError(error, _offset, _length, line, column) {
        problem ??= `is not JSON (${wordsOf(error)} ${at(line, column)})`;
      },
    },
    STRICT,
  );
  return problem;
}

/** The first problem of a strict JSON text; jsonc-parser descends by recursion, which a deep enough text exhausts. */
function scanned(text: string): string | undefined {
  try {
    return problemOf(text);
  } catch (err) {
    if (err instanceof RangeError) return `nests deeper than ${MAX_DEPTH} levels`;
    throw err;
  }
}

/** Reads `text` as JSON: its value and where things are in it, or the one problem, naming no byte of the text. */
export function readJsonText(text: string): JsonText {
  const problem = scanned(text);
  if (problem !== undefined) return { ok: false, problem };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // jsonc-parser in strict mode and JSON.parse take the same texts; were they ever to differ, JSON.parse decides.
    return { ok: false, problem: 'is not JSON' };
  }
  // The tree is built only to place a refusal: it costs several times what JSON.parse does.
  let tree: Node | undefined;
  const nodeAt = (path: JsonPath): Node => {
    const root = (tree ??= parseTree(text, [], STRICT)!);
    for (let n = path.length; n > 0; n--) {
      const node = findNodeAtLocation(root, path.slice(0, n) as (string | number)[]);
      if (node !== undefined) return node;
    }
    return root;
  };
  return {
    ok: true,
    value,
    placeOf: (path) => placeAt(text, nodeAt(path).offset),
    placeOfKey(path, key) {
      const property = nodeAt(path).children?.find((p) => p.children?.[0]?.value === key);
      return placeAt(text, (property ?? nodeAt(path)).offset);
    },
  };
}
