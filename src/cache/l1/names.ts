/**
 * L1 keys, remembered. A hit looks its entry up by l1Key's string; built afresh, that string is
 * concatenated, flattened and hashed on every request (about 2% of a recording hit's work,
 * counted). Remembered per generation object, the same string object comes back while the
 * generation stands, with its hash already computed, and it is the very key L1 stored the entry
 * under, so the lookup compares no characters.
 *
 * Generations are frozen and replaced, never changed (purge/generations.ts), and the names are kept by
 * the generation object's identity: a purge's new generation finds no remembered name, exactly
 * as l1Key would give it a new one. The `unknown` generation is shared by workspaces, so names
 * are kept per workspace within a generation.
 */
import type { WorkspaceId } from '../../brands.js';
import { l1Key, type Generation, type ResourceKey } from '../entry/keys.js';

/**
 * Names remembered in all. Past it everything is forgotten and remembered afresh: a working set
 * larger than this pays a map insert on top of building the name (measured small against the
 * name itself), and the memory held stays a few MiB whatever the traffic.
 */
const DEFAULT_LIMIT = 16_384;

/** l1Key, remembered (bounded). One per app. */
export class L1Names {
  #byGeneration = new WeakMap<Generation, Map<WorkspaceId, Map<ResourceKey, string>>>();
  /** Names remembered since the last reset, including those of generations since replaced. */
  #held = 0;

  constructor(private readonly limit = DEFAULT_LIMIT) {}

  /** Names held now (at most the limit). */
  get size(): number {
    return this.#held;
  }

  /** l1Key(workspace, generation, key): the same string, the same object while it is remembered. */
  of(workspace: WorkspaceId, generation: Generation, key: ResourceKey): string {
    let byWorkspace = this.#byGeneration.get(generation);
    let byKey = byWorkspace?.get(workspace);
    const known = byKey?.get(key);
    if (known !== undefined) return known;
    const name = l1Key(workspace, generation, key);
    if (this.#held >= this.limit) {
      this.#byGeneration = new WeakMap();
      this.#held = 0;
      byWorkspace = byKey = undefined;
    }
    if (byWorkspace === undefined)
      this.#byGeneration.set(
        generation,
        (byWorkspace = new Map<WorkspaceId, Map<ResourceKey, string>>()),
      );
    if (byKey === undefined) byWorkspace.set(workspace, (byKey = new Map<ResourceKey, string>()));
    byKey.set(key, name);
    this.#held++;
    return name;
  }
}
