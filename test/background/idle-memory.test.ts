import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { dropKeptMemory } from "../../workers/idle-memory.js";
import { PlanePool, ScratchPlane } from "../../workers/background/scratch-plane.js";

describe("memory kept between calls, let go with an idle model", () => {
  it("takes the removal's scratch planes and pooled planes with it", () => {
    const scratch = new ScratchPlane();
    const kept = scratch.take(1000).buffer;
    expect(scratch.take(500).buffer).toBe(kept);
    const pool = new PlanePool();
    const lease = pool.lease();
    const pooled = lease.allocate(1000).buffer;
    lease.release();
    dropKeptMemory();
    expect(scratch.take(500).buffer).not.toBe(kept);
    expect(pool.lease().allocate(1000).buffer).not.toBe(pooled);
  });

  it("empties libvips' operation cache and keeps its limits", async () => {
    const limits = sharp.cache();
    await sharp({ create: { width: 256, height: 256, channels: 3, background: "#336699" } }).blur(2).png().toBuffer();
    expect(sharp.cache().items.current).toBeGreaterThan(0);
    dropKeptMemory();
    const after = sharp.cache();
    expect(after.items.current).toBe(0);
    expect(after.memory.current).toBe(0);
    expect({ memory: after.memory.max, items: after.items.max, files: after.files.max }).toEqual({ memory: limits.memory.max, items: limits.items.max, files: limits.files.max });
  });
});
