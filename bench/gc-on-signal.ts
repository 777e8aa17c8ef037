/**
 * Preloaded (`--expose-gc --import`) into the memory case's processes: SIGUSR2 runs a full
 * collection, so RSS is read with the garbage of the fill gone, as in every process measured.
 */
process.on('SIGUSR2', () => {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
});
