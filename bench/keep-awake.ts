/**
 * Keeps a core from going idle while latency is timed. On a virtual machine an idle vCPU is
 * halted, and waking it costs tens to hundreds of microseconds: a gateway that waits on a 20 ms
 * upstream pays that twice per request (request in, upstream answer in), while the simulator
 * called directly shares the always-busy load generator's core and never does. A spinner at
 * SCHED_IDLE priority (`chrt --idle 0`) runs only when nothing else on the core is runnable, so
 * the core stays awake without taking time from the server measured on it.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

/** Whether `chrt` exists here; without it latencies include the machine's wake-up cost. */
export const canKeepAwake = existsSync('/usr/bin/chrt') || existsSync('/bin/chrt');

/** Starts an idle-priority spinner on `cpu`; returns the function that stops it. */
export function keepAwake(cpu: number): () => void {
  if (!canKeepAwake) return () => {};
  const spinner = spawn(
    'chrt',
    ['--idle', '0', 'taskset', '-c', String(cpu), 'sh', '-c', 'while :; do :; done'],
    { stdio: 'ignore' },
  );
  spinner.on('error', () => {});
  return () => {
    spinner.kill('SIGKILL');
  };
}
