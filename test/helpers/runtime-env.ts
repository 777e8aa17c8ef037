/**
 * The malloc setting the production image runs with (Dockerfile ENV): allocations of 128 KiB and
 * up always get their own mapping, so a freed one goes back to the system. The image test checks
 * the Dockerfile against it; the bench and the soak run their gateways with it, as the image does.
 */
export const RUNTIME_ENV: Readonly<Record<string, string>> = { MALLOC_MMAP_THRESHOLD_: '131072' };
