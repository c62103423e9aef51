/**
 * glibc malloc settings the service starts with (`npm start`, `npm run start:workers` set them; a
 * container or unit file must set them too): they are read once at process start, so they cannot be
 * set from here, only named. Why: onnxruntime allocates a model's weights and each run's activations
 * in blocks of a few MB; glibc raises its mmap threshold after the first such block is freed, so later
 * ones come from heaps that are never given back, and each thread may get an arena of its own.
 * Measured with bench/model-memory.ts (ISNet, 1 MP background removal, whole process): peak resident
 * 1319 MB with glibc's defaults, 1018 MB with these; resident after loading 793 MB against 532 MB.
 */
export const ALLOCATOR_ENV: Readonly<Record<string, string>> = {
  // Blocks of 1 MiB and more are mapped and unmapped on their own, so freeing them returns memory.
  MALLOC_MMAP_THRESHOLD_: "1048576",
  // Two arenas (main and inference thread) rather than up to eight per core.
  MALLOC_ARENA_MAX: "2",
};

/** Whether this process started with {@link ALLOCATOR_ENV}. */
export function hasAllocatorSettings(env: NodeJS.ProcessEnv = process.env): boolean {
  return Object.entries(ALLOCATOR_ENV).every(([name, value]) => env[name] === value);
}
