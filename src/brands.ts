/** Branded primitives: a value of one cannot be passed where another is expected. */

declare const brand: unique symbol;
type Brand<T, B extends string> = T & { readonly [brand]: B };

/** A validated workspace name: one lower-case DNS label. */
export type WorkspaceId = Brand<string, 'WorkspaceId'>;
/** A duration or instant in milliseconds. */
export type Milliseconds = Brand<number, 'Milliseconds'>;
/** Hex SHA-256 of an API key: the only form in which a key is kept. */
export type KeyHash = Brand<string, 'KeyHash'>;

const WORKSPACE_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** Returns the branded workspace, or undefined when `name` is not one DNS label. */
export function asWorkspaceId(name: string): WorkspaceId | undefined {
  return WORKSPACE_LABEL.test(name) ? (name as WorkspaceId) : undefined;
}

/** Brands a number of milliseconds. */
export function ms(value: number): Milliseconds {
  return value as Milliseconds;
}
