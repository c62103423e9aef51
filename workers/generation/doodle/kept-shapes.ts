/**
 * One object of each shape the drawing loops read, kept for the life of the process.
 *
 * V8 compiles the loops against the hidden classes of the objects they read (a FloatMap, a BitMap,
 * the resampling taps, the pen). A hidden class lives only while some object has it. When the process
 * idles, waiting on other work (an upscale's long inference, say), V8's memory reducer runs
 * collections that free the hidden classes no live object has, and drop the code compiled against
 * them: without these objects, the first doodle after such a wait runs its loops unoptimised. One
 * live object of each shape keeps the classes, and so the code.
 *
 * Each is made at its module's load, before any other of its kind, with field values of the kinds
 * every later one holds (a fraction where a field may hold one), so later objects take its hidden
 * class rather than a new one.
 */
const kept: object[] = [];

/** Keeps `shape` alive for good (see above). */
export function keepShape(shape: object): void {
  kept.push(shape);
}
