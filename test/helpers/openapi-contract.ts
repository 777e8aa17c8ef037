/**
 * Validates real responses against the OpenAPI description (openapi/recordings-gateway.yaml):
 * the operation (path template and method), a documented status, every required header present
 * and every documented header's value matching its schema, and the JSON body against its schema.
 * startGateway's get() and admin() run every reply through it, so the document and the gateway
 * cannot drift apart without a test failing.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { readOpenApiDocument } from '../../src/openapi/document.js';

type Json = Record<string, any>;

/** ajv-formats is CommonJS: its default export arrives as the module object under NodeNext. */
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as (ajv: Ajv2020) => void;

/** One reply as the test helpers see it. */
export interface ContractReply {
  /** Which listener answered: unknown paths are answered differently by each. */
  readonly listener: 'public' | 'admin';
  readonly method: string;
  /** The request path, query included or not. */
  readonly path: string;
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
}

/** Where unknown public paths are checked: the route-independent answers are the same everywhere. */
const LIST = '/api/external/v2/recordings';
const HTTP_METHODS = ['get', 'head', 'post', 'put', 'delete', 'patch', 'options'];

/** Escapes one JSON pointer segment (RFC 6901). */
function pointerSegment(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** The document and compiled validators, built once per process. */
export class OpenApiContract {
  readonly document: Json;
  private readonly ajv: Ajv2020;
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly templates: Array<{ template: string; pattern: RegExp }>;

  constructor(document: Json = readOpenApiDocument()) {
    this.document = document;
    // OpenAPI 3.1 schemas are JSON Schema 2020-12; the document itself is registered whole so
    // its '#/components/...' references resolve, and compiled only where a response points.
    this.ajv = new Ajv2020({ strict: false, validateSchema: false, allErrors: true });
    addFormats(this.ajv);
    this.ajv.addSchema(document, 'openapi.json');
    this.templates = Object.keys(document['paths'] as Json).map((template) => ({
      template,
      pattern: new RegExp(
        `^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`,
      ),
    }));
    this.compileAll();
  }

  /**
   * Compiles every response's header and body schemas up front: compiling on first use would
   * put a pause between a test's requests (and into the Age it reads back).
   */
  private compileAll(): void {
    for (const [template, item] of Object.entries(this.document['paths'] as Json)) {
      for (const method of HTTP_METHODS) {
        for (const status of Object.keys((item[method]?.responses ?? {}) as Json)) {
          const [response, pointer] = this.follow(
            `#/paths/${pointerSegment(template)}/${method}/responses/${status}`,
          );
          for (const name of Object.keys((response['headers'] ?? {}) as Json))
            this.validator(
              `${this.follow(`${pointer}/headers/${pointerSegment(name)}`)[1]}/schema`,
            );
          for (const type of Object.keys((response['content'] ?? {}) as Json))
            this.validator(`${pointer}/content/${pointerSegment(type)}/schema`);
        }
      }
    }
  }

  /** Problems found with one reply; empty when it matches the document. */
  problems(reply: ContractReply): string[] {
    const path = reply.path.split('?')[0] ?? '';
    const method = reply.method.toLowerCase();
    // Public operations live under /api/, admin ones elsewhere; each listener answers only its own.
    const template = this.templates.find(
      (candidate) =>
        candidate.template.startsWith('/api/') === (reply.listener === 'public') &&
        candidate.pattern.test(path),
    )?.template;
    const where = `${reply.method} ${path} → ${reply.status}`;
    let responsePointer: string;
    if (template === undefined && reply.listener === 'admin') {
      // The admin listener answers any other path 404 with its plain error body.
      if (reply.status !== 404)
        return [`${where}: a path not in the document answered ${reply.status}`];
      responsePointer = '#/components/responses/AdminError';
    } else {
      // A public path the API does not have, or a method it does not serve: answered like the
      // list route's route-independent checks (Host 400/404, then 404 or 405).
      const item = this.document['paths'][template ?? LIST] as Json;
      const documented = HTTP_METHODS.filter((name) => item[name] !== undefined);
      const known = template !== undefined && item[method] !== undefined;
      if (!known && ![400, 404, 405].includes(reply.status)) {
        return [
          `${where}: ${template === undefined ? 'a path not in the document' : `a method not documented for ${template}`} answered ${reply.status}`,
        ];
      }
      const pointer = `#/paths/${pointerSegment(template ?? LIST)}/${known ? method : documented[0]!}`;
      const operation = this.resolve(pointer);
      const key = String(reply.status);
      responsePointer = `${pointer}/responses/${key}`;
      if (operation['responses'][key] === undefined) {
        if (operation['responses']['default'] === undefined)
          return [`${where}: status not documented`];
        responsePointer = `${pointer}/responses/default`;
      }
    }
    const [response, resolvedPointer] = this.follow(responsePointer);
    return [
      ...this.headerProblems(where, response, resolvedPointer, reply),
      ...this.bodyProblems(where, response, resolvedPointer, reply),
    ];
  }

  /** Throws with every problem of a reply; the helpers call it on each one. */
  check(reply: ContractReply): void {
    const problems = this.problems(reply);
    if (problems.length > 0)
      throw new Error(
        `response does not match openapi/recordings-gateway.yaml:\n  ${problems.join('\n  ')}`,
      );
  }

  private headerProblems(
    where: string,
    response: Json,
    pointer: string,
    reply: ContractReply,
  ): string[] {
    const problems: string[] = [];
    for (const name of Object.keys((response['headers'] ?? {}) as Json)) {
      const [header, headerPointer] = this.follow(`${pointer}/headers/${pointerSegment(name)}`);
      const value = reply.headers[name.toLowerCase()];
      if (value === undefined) {
        if (header['required'] === true) problems.push(`${where}: header ${name} is required`);
        continue;
      }
      const validate = this.validator(`${headerPointer}/schema`);
      for (const one of Array.isArray(value) ? value : [value]) {
        if (!validate(one))
          problems.push(
            `${where}: header ${name}: ${JSON.stringify(one)} ${this.ajv.errorsText(validate.errors)}`,
          );
      }
    }
    return problems;
  }

  private bodyProblems(
    where: string,
    response: Json,
    pointer: string,
    reply: ContractReply,
  ): string[] {
    const content = response['content'] as Json | undefined;
    if (reply.method === 'HEAD' || reply.status === 304)
      return reply.text === '' ? [] : [`${where}: a body where none belongs`];
    if (content === undefined)
      return reply.text === '' ? [] : [`${where}: a body the document does not describe`];
    // An encoded body's bytes are not JSON: its headers were checked; the identity answers check the shape.
    if (reply.headers['content-encoding'] !== undefined) return [];
    const type = String(reply.headers['content-type'] ?? '')
      .split(';')[0]!
      .trim();
    const mediaType = Object.keys(content).find(
      (name) => name === type || (name === 'text/plain' && type.startsWith('text/plain')),
    );
    if (mediaType === undefined)
      return [
        `${where}: Content-Type ${type || '(none)'} not documented (${Object.keys(content).join(', ')})`,
      ];
    let body: unknown = reply.text;
    if (mediaType === 'application/json') {
      try {
        body = JSON.parse(reply.text);
      } catch {
        return [`${where}: body is not JSON`];
      }
    }
    const validate = this.validator(`${pointer}/content/${pointerSegment(mediaType)}/schema`);
    return validate(body)
      ? []
      : [`${where}: body ${this.ajv.errorsText(validate.errors, { dataVar: 'body' })}`];
  }

  /** Whether `value` is valid under the schema at a pointer (e.g. `#/components/schemas/Recording`). */
  accepts(pointer: string, value: unknown): boolean {
    return this.validator(pointer)(value) === true;
  }

  /** A compiled validator for the schema at a pointer into the document. */
  private validator(pointer: string): ValidateFunction {
    let validate = this.validators.get(pointer);
    if (validate === undefined) {
      validate = this.ajv.compile({ $ref: `openapi.json${pointer}` });
      this.validators.set(pointer, validate);
    }
    return validate;
  }

  /** The object at a pointer, following $refs to components; and the pointer it was found at. */
  private follow(pointer: string): [Json, string] {
    let current = pointer;
    let value = this.resolve(current);
    while (typeof value['$ref'] === 'string') {
      current = value['$ref'];
      value = this.resolve(current);
    }
    return [value, current];
  }

  private resolve(pointer: string): Json {
    let value: any = this.document;
    for (const raw of pointer.replace(/^#\//, '').split('/')) {
      value = value?.[raw.replace(/~1/g, '/').replace(/~0/g, '~')];
    }
    if (value === undefined) throw new Error(`no ${pointer} in the OpenAPI document`);
    return value as Json;
  }
}

let shared: OpenApiContract | undefined;

/** The contract of this test process (the document is read and compiled once). */
export function openApiContract(): OpenApiContract {
  shared ??= new OpenApiContract();
  return shared;
}
