/**
 * The fetches in flight, one per flight key (keys.ts#flightKey: a resource under a workspace's
 * generation; keys.ts#ownFlightKey: one shared only by one API key's requests). A request
 * that finds one waits for it instead of fetching; the lookup each was started for (its leader)
 * is kept so a waiter's trace can link to it, and so a flight can hand its key over (heldByOther).
 */
import type { Lookup, Served } from './lookup.js';

/** The flight's answer if it settles within `ms`; undefined if it takes longer or fails. */
export async function settledWithin(
  flight: Promise<Served>,
  ms: number,
): Promise<Served | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(resolve, ms, undefined)));
  try {
    return await Promise.race([flight.catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}

export class Flights {
  private readonly flights = new Map<string, Promise<Served>>();
  /** The lookup each flight fetches for, so a request that joins it can link to its trace. */
  private readonly leaders = new WeakMap<Promise<Served>, Lookup>();

  get(flightKey: string): Promise<Served> | undefined {
    return this.flights.get(flightKey);
  }

  /**
   * Whether a flight led by another lookup than `lookup` holds `flightKey`. A flight whose leader
   * starts a refresh of the same key (its answer is a stale or refresh-due value it found on the
   * way, so it fetches nothing) hands the key over: its waiters keep its answer, and whoever
   * comes next joins the refresh.
   */
  heldByOther(flightKey: string, lookup: Lookup): boolean {
    const flight = this.flights.get(flightKey);
    return flight !== undefined && this.leaders.get(flight) !== lookup;
  }

  /**
   * Runs `fetch` as the flight of `flightKey` until it settles; `leader` is the lookup it fetches
   * for. The flight holds the key before `fetch` begins, so whatever `fetch` starts at once sees
   * it; when it settles, it lets go of the key only if it still holds it (it may have handed it over).
   */
  fly(flightKey: string, leader: Lookup, fetch: () => Promise<Served>): Promise<Served> {
    const flight: Promise<Served> = Promise.resolve()
      .then(fetch)
      .finally(() => {
        if (this.flights.get(flightKey) === flight) this.flights.delete(flightKey);
      });
    this.flights.set(flightKey, flight);
    this.leaders.set(flight, leader);
    return flight;
  }

  /** The flight under `flightKey`, or a new one running `fetch`. */
  join(flightKey: string, leader: Lookup, fetch: () => Promise<Served>): Promise<Served> {
    return this.flights.get(flightKey) ?? this.fly(flightKey, leader, fetch);
  }

  /** Links `lookup`'s trace to the fetch of the flight it waited on. */
  linkWaiter(lookup: Lookup, flight: Promise<Served>): void {
    lookup.trace?.linkTo(this.leaders.get(flight)?.trace);
  }
}
