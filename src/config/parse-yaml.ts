/**
 * YAML parsed into plain values whose strings are one-byte wherever their text allows it.
 *
 * V8 keeps a text that holds any character beyond Latin-1 (one "…" in a description is enough)
 * as a two-byte string, and so is every string the parser slices out of it. Object keys are
 * interned, and the first string of a given text to be interned is the one that every later
 * literal of that text resolves to. So the OpenAPI document's keys ("Cache-Status",
 * "X-Request-Id") made the gateway's own header-name literals two-byte, and every response's
 * header block was then built as two-byte text and converted back to bytes on each write. Parsing
 * into Maps interns nothing; each Latin-1 string is copied to a one-byte string before it becomes
 * a key or a value.
 */
import { parse, type DocumentOptions, type ParseOptions, type ToJSOptions } from 'yaml';

const BEYOND_LATIN1 = /[\u0100-\uffff]/;

/** The text as a one-byte string when every character fits in one byte; otherwise as it is. */
function oneByte(text: string): string {
  return BEYOND_LATIN1.test(text) ? text : Buffer.from(text, 'latin1').toString('latin1');
}

function toPlain(value: unknown): unknown {
  if (typeof value === 'string') return oneByte(value);
  if (Array.isArray(value)) return value.map(toPlain);
  if (value instanceof Map) {
    const plain: Record<string, unknown> = {};
    for (const [key, item] of value as Map<unknown, unknown>) {
      // defineProperty, not assignment: a "__proto__" key is data, never the object's prototype.
      Object.defineProperty(plain, oneByte(String(key)), {
        value: toPlain(item),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return plain;
  }
  return value;
}

/** `yaml.parse`, with mappings as plain objects and every Latin-1 key and string one-byte. */
export function parseYaml(
  text: string,
  options: ParseOptions & DocumentOptions & Omit<ToJSOptions, 'mapAsMap'> = {},
): unknown {
  return toPlain(parse(text, { ...options, mapAsMap: true }));
}
