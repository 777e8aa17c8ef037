/** Bench child: the upstream simulator, in its own pinned process so its work is not the gateway's. */
import { startSimulator, type Simulator, type SimulatorOptions } from '../src/sim/server.js';
import { serveCommands } from './pinned-child.js';

/** What the parent needs to point a gateway (or a direct client) at the simulator. */
export interface SimInfo {
  baseUrlTemplate: string;
  origin: string;
  keys: Record<string, string[]>;
  /** Recording ids and public link codes per workspace, in the simulator's order. */
  ids: Record<string, Array<{ id: string; link: string | null }>>;
  /** The Cloud CDN key name and base64url key, for a gateway that re-signs (a secret: written to a 0600 file only). */
  cloudCdn: { keyName: string; key: string };
}

let sim: Simulator | undefined;

serveCommands(
  {
    async start(options: SimulatorOptions): Promise<SimInfo> {
      sim = await startSimulator(options);
      const ids: SimInfo['ids'] = {};
      for (const [ws, recordings] of Object.entries(sim.data))
        ids[ws] = recordings.map((r) => ({ id: r.id, link: r.public_link_id }));
      return {
        baseUrlTemplate: sim.baseUrlTemplate,
        origin: sim.origin,
        keys: sim.keys,
        ids,
        cloudCdn: {
          keyName: sim.signingKeys.cloudCdn.keyName,
          key: sim.signingKeys.cloudCdn.key.toString('base64url'),
        },
      };
    },
    /** Sets a fixed added latency on every answer (0 clears it). */
    latency(ms: number): null {
      sim?.faults.clear();
      if (ms > 0) sim?.faults.set({ kind: 'latency', ms });
      return null;
    },
    /** Requests the simulator has answered so far. */
    total(): number {
      return sim?.counters.total ?? 0;
    },
  },
  async () => {
    await sim?.close();
  },
);
