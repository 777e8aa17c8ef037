/**
 * YAML parsed into plain values, with mappings built key by key: a "__proto__" key in a
 * configuration file or the OpenAPI document is data, never the object's prototype.
 */
import { parse, type DocumentOptions, type ParseOptions, type ToJSOptions } from 'yaml';

function toPlain(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toPlain);
  if (value instanceof Map) {
    const plain: Record<string, unknown> = {};
    for (const [key, item] of value as Map<unknown, unknown>) {
      // defineProperty, not assignment: a "__proto__" key is data, never the object's prototype.
      Object.defineProperty(plain, String(key), {
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

/** `yaml.parse`, with mappings as plain objects. */
export function parseYaml(
  text: string,
  options: ParseOptions & DocumentOptions & Omit<ToJSOptions, 'mapAsMap'> = {},
): unknown {
  return toPlain(parse(text, { ...options, mapAsMap: true }));
}
