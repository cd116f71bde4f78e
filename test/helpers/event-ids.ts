/**
 * `text` (SSE frames, each ending at a blank line) with the `id:` line sluice's SSE writer gives
 * every frame: 1, 2, 3 ... in stream order, `[DONE]` included, comments none (docs/streams/resume.md). For tests that compare a stream byte for byte with the frames they expect.
 */
export function withEventIds(text: string, firstId = 1): string {
  let id = firstId;
  return text
    .split(/(?<=\n\n)/)
    .map((frame) => (frame.startsWith(':') || frame === '' ? frame : `id: ${id++}\n${frame}`))
    .join('');
}
