// A JSON text read for a refusal that names places, never content: a syntax error by its line and column (JSON.parse's
// own message quotes the text around it), a key given twice in one object refused (JSON.parse keeps the last one
// silently), and any place in the document found again by its path. jsonc-parser reads the text with comments and
// trailing commas refused; JSON.parse still decides what is JSON and builds the value.
import { findNodeAtLocation, parseTree, printParseErrorCode, type Node, type ParseError } from 'jsonc-parser';

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

/** The key node of the first key a document's objects give twice, walked without recursion. */
function repeatedKey(root: Node): Node | undefined {
  const pending = [root];
  for (let node = pending.pop(); node; node = pending.pop()) {
    const children = node.children ?? [];
    if (node.type === 'object') {
      const seen = new Set<unknown>();
      for (const key of children.map((property) => property.children?.[0])) {
        if (seen.has(key?.value)) return key;
        seen.add(key?.value);
      }
    }
    for (const child of children) pending.push(child);
  }
  return undefined;
}

/** The tree of a strict JSON text, or its first problem. */
function treeOf(text: string): { ok: true; root: Node } | { ok: false; problem: string } {
  const errors: ParseError[] = [];
  let root: Node | undefined;
  try {
    root = parseTree(text, errors, STRICT);
  } catch (err) {
    // jsonc-parser descends by recursion: an array nested a hundred thousand deep runs out of stack.
    if (err instanceof RangeError) return { ok: false, problem: 'is not JSON the gateway reads (nested too deep)' };
    throw err;
  }
  const error = errors[0];
  if (error !== undefined || root === undefined) {
    const at = error === undefined ? '' : ` (${wordsOf(error.error)} at ${placeAt(text, error.offset)})`;
    return { ok: false, problem: `is not JSON${at}` };
  }
  const twice = repeatedKey(root);
  if (twice !== undefined)
    return { ok: false, problem: `gives a key twice in one object (at ${placeAt(text, twice.offset)})` };
  return { ok: true, root };
}

/** Reads `text` as JSON: its value and where things are in it, or the one problem, naming no byte of the text. */
export function readJsonText(text: string): JsonText {
  const tree = treeOf(text);
  if (!tree.ok) return tree;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // jsonc-parser in strict mode and JSON.parse take the same texts; were they ever to differ, JSON.parse decides.
    return { ok: false, problem: 'is not JSON' };
  }
  const { root } = tree;
  const nodeAt = (path: JsonPath): Node => {
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
