/**
 * How the bench decides that one server is ahead of another on a noisy shared host: runs are
 * compared in pairs measured in the same round, and a lead counts only when it is wider than the
 * spread of two identical servers measured the same way (the control).
 */
import { median } from './load.js';

/** Per-round ratios of two servers' req/s and CPU per request (a over b). */
export interface PairedRatios {
  readonly rps: readonly number[];
  readonly cpu: readonly number[];
}

/** The spread of a control pair: the widest distance from 1 of its ratios, for req/s and CPU. */
export interface Spread {
  readonly rps: number;
  readonly cpu: number;
}

/**
 * The order the variants are loaded in a round: forwards in even rounds, backwards in odd ones,
 * so two neighbours swap places every round and a drift within a round favours neither.
 */
export function roundOrder(count: number, round: number): number[] {
  const order = Array.from({ length: count }, (_, i) => i);
  return round % 2 === 0 ? order : order.reverse();
}

/**
 * How many rounds to run when `requested` were asked for: the next even number. Where a server
 * stands in its round's start order moves its rate (see the long hit case), and {@link roundOrder}
 * only balances that over pairs of rounds, so an odd count would give one order an extra round.
 */
export function evenRounds(requested: number): number {
  return Math.max(2, Math.ceil(requested / 2) * 2);
}

/** One ratio per round, of two series measured one after the other in each round. */
export function pairedRatios(a: readonly number[], b: readonly number[]): number[] {
  if (a.length !== b.length) throw new RangeError(`paired series of ${a.length} and ${b.length}`);
  return a.map((value, i) => value / b[i]!);
}

/** How far two identical servers landed apart at worst: the widest distance of their ratios from 1. */
export function spreadOf(control: PairedRatios): Spread {
  const widest = (ratios: readonly number[]): number =>
    Math.max(...ratios.map((ratio) => Math.abs(ratio - 1)));
  return { rps: widest(control.rps), cpu: widest(control.cpu) };
}

/** Ahead in every round: more req/s and less CPU per request than the reference in each pair. */
export function aheadEveryRound(ratios: PairedRatios): boolean {
  return Math.min(...ratios.rps) > 1 && Math.max(...ratios.cpu) < 1;
}

/** Ahead by more than the spread: the median pair beyond the control's widest, on both measures. */
export function aheadBeyondSpread(ratios: PairedRatios, spread: Spread): boolean {
  return median(ratios.rps) > 1 + spread.rps && median(ratios.cpu) < 1 - spread.cpu;
}

/**
 * Fewer instructions a hit than the reference: `counts`' median window below the reference's
 * least. The median, not the worst window: one window that holds a full collection can count
 * twice the others, one event rather than the typical hit.
 */
export function fewerByMedian(counts: readonly number[], reference: readonly number[]): boolean {
  return median(counts) < Math.min(...reference);
}
