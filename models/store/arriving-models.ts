/**
 * Models being installed right now by first-start provisioning, per models folder, so a request
 * that needs one is told it is on its way (503, Retry-After, progress) rather than "not installed".
 */
export interface Arrival {
  receivedBytes: number;
  totalBytes: number;
}

const byFolder = new Map<string, Map<string, Arrival>>();

export function arrivalsIn(modelsDir: string): Map<string, Arrival> {
  let arrivals = byFolder.get(modelsDir);
  if (!arrivals) byFolder.set(modelsDir, (arrivals = new Map()));
  return arrivals;
}

/** The model's download progress when it is queued or downloading, else undefined. */
export function arrivingModel(modelsDir: string, id: string): Arrival | undefined {
  return byFolder.get(modelsDir)?.get(id);
}

/** A sentence for the 503 a request gets while its model arrives. */
export function describeArrival(id: string, arrival: Arrival): string {
  const percent = arrival.totalBytes > 0 ? Math.floor((100 * arrival.receivedBytes) / arrival.totalBytes) : 0;
  const megabytes = (arrival.totalBytes / 1_000_000).toFixed(1);
  return `The model "${id}" is still being installed on this server (first start): ${percent}% of ${megabytes} MB received. Retry shortly; /readyz shows the progress.`;
}
