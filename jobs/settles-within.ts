/**
 * Whether a promise settles within `ms`. Closing Redis clients that wait through reconnections
 * (maxRetriesPerRequest null, which BullMQ needs) never ends while Redis is down, so shutdown bounds
 * each wait and drops the connection instead.
 */
export async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true, () => true), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
