/**
 * The OpenAPI description (openapi/recordings-gateway.yaml), read once and kept as the JSON text
 * the admin listener serves at GET /openapi.json. The YAML file is the source: comments and
 * anchors keep it readable; clients and generators get plain JSON.
 */
import { readFileSync } from 'node:fs';
import { parseYaml } from '../config/parse-yaml.js';
import { packageFile } from '../package-file.js';

const DOCUMENT_FILE = packageFile('openapi/recordings-gateway.yaml');

/** The document as a plain object (tests validate it and generate a client from it). */
export function readOpenApiDocument(file: string | URL = DOCUMENT_FILE): Record<string, unknown> {
  // merge: false is the default; YAML anchors and aliases become repeated objects in JSON.
  return parseYaml(readFileSync(file, 'utf8'), { maxAliasCount: -1 }) as Record<string, unknown>;
}

/** The document as the JSON text served at GET /openapi.json. */
export function openApiJson(file?: string | URL): string {
  return JSON.stringify(readOpenApiDocument(file));
}
