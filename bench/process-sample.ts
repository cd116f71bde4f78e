/** A child's answer to `{type:'sample'}` over IPC: its own CPU time and memory. */
export interface ProcessSample {
  type: 'sample';
  id: number;
  /** process.cpuUsage(), microseconds since the process started. */
  userUs: number;
  systemUs: number;
  /** RSS now, bytes. */
  rss: number;
  /** Highest RSS seen since the previous sample (sampled every 100 ms), bytes. */
  peakRss: number;
  /** process.resourceUsage().maxRSS, bytes: the lifetime peak the kernel saw. */
  maxRss: number;
}

/**
 * Makes this child answer samples. RSS is polled, not hooked: 100 ms keeps the poll itself (a
 * /proc read, ~60 us on this VM) far below what is being measured.
 */
export function answerSamples(): void {
  let peakRss = process.memoryUsage.rss();
  setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
  }, 100).unref();
  process.on('message', (msg: { type: string; id?: number }) => {
    if (msg.type !== 'sample') return;
    const cpu = process.cpuUsage();
    const rss = process.memoryUsage.rss();
    const reply: ProcessSample = {
      type: 'sample',
      id: msg.id ?? 0,
      userUs: cpu.user,
      systemUs: cpu.system,
      rss,
      peakRss: Math.max(peakRss, rss),
      maxRss: process.resourceUsage().maxRSS * 1024,
    };
    peakRss = rss;
    process.send?.(reply);
  });
}
