/**
 * glibc malloc settings the service starts with (`npm start`, `npm run start:workers` set them; a
 * container or unit file must set them too): they are read once at process start, so they cannot be
 * set from here, only named. Why: onnxruntime allocates a model's weights and each run's activations
 * in blocks of a few MB; glibc raises its mmap threshold after the first such block is freed, so later
 * ones come from heaps that are never given back, and each thread may get an arena of its own.
 * Measured with bench/model-memory.ts (ISNet, 1 MP background removal, whole process): peak resident
 * 1319 MB with glibc's defaults, 1018 MB with these; resident after loading 793 MB against 532 MB.
 *
 * Why 1 MiB and not higher: ISNet frees many blocks between 1 and 16 MiB. Fresh processes, 1 MP removal,
 * whole-process peak / resident after eviction (bench/model-memory.ts, load average 25 to 40): 1 MiB
 * 992-996 / 189-219 MB (three runs), 4 MiB 1075 / 345 MB, 16 MiB 1212 / 522 MB. The price is time on
 * models that allocate blocks of a few MB per call (`--allocator-timing 3`, settings interleaved,
 * medians of per-round ratios to glibc's defaults, load 26 to 41): ESPCN x3 256 px 1.28x with 1 MiB,
 * 0.78x with 16 MiB; ESRGAN thick x4 64 px 1.06x and 0.96x. Memory returned wins for a service
 * with a memory budget; re-measure on a quiet machine.
 *
 * Why huge pages (glibc.malloc.hugetlb=1: malloc asks for transparent huge pages, MADV_HUGEPAGE, on
 * what it maps, which counts where the kernel's transparent huge pages are in "madvise" mode):
 * with the 1 MiB threshold every image-sized buffer (a 12 MP image's bytes, its base64 text, the
 * chunks of a body) is a fresh mapping, and touching it first faults it in 4 KiB at a time on the
 * router's thread: more router CPU per call than glibc's defaults, and longer event-loop blocks
 * (bench/router-event-loop.ts measures both). In 2 MiB pages those faults are few. Freed mappings
 * still go back to the system whole, so ISNet's peak and its memory after eviction stay within their
 * goals (bench/model-memory.ts). Where the kernel has huge pages off, or always on, it changes nothing.
 */
export const ALLOCATOR_ENV: Readonly<Record<string, string>> = {
  // Blocks of 1 MiB and more are mapped and unmapped on their own, so freeing them returns memory.
  MALLOC_MMAP_THRESHOLD_: "1048576",
  // Two arenas (main and inference thread) rather than up to eight per core.
  MALLOC_ARENA_MAX: "2",
  // Those mappings in transparent huge pages, so a fresh one faults in 2 MiB at a time.
  GLIBC_TUNABLES: "glibc.malloc.hugetlb=1",
};

/** Whether this process started with {@link ALLOCATOR_ENV}. */
export function hasAllocatorSettings(env: NodeJS.ProcessEnv = process.env): boolean {
  return Object.entries(ALLOCATOR_ENV).every(([name, value]) => env[name] === value);
}
