import { carriesOutput, classifyChatFrame } from './chat-frame.ts';
import { asObject, type Frame, type Report, type RuleFamily } from './types.ts';

/**
 * Usage comes once, after the finish of every choice: on the finish chunk itself
 * (reference/chat-streaming-full.txt), or on a chunk of its own with `choices: []`, or as the
 * accounting profile's `usage_final`. After it, only the closing frames: an error frame when the
 * stream failed (sluice sends the usage so far, then the error), accounting and vendor events, [DONE].
 */
export function chatUsageRules(): RuleFamily {
  let usageAt: number | null = null;
  return {
    frame(f: Frame, report: Report) {
      const frame = classifyChatFrame(f);
      const isUsage =
        (frame.kind === 'chunk' && asObject(frame.chunk.usage) !== undefined) ||
        (frame.kind === 'accounting' && frame.name === 'usage_final');
      if (frame.kind === 'chunk' && frame.choices.length > 0 && usageAt !== null) {
        report(
          f.n,
          'chat/usage-after-finish',
          `a chunk with choices after the usage (frame ${usageAt}): usage comes after every finish`,
        );
      }
      if (!isUsage) return;
      if (usageAt !== null) return report(f.n, 'chat/usage-after-finish', `a second usage (the first was frame ${usageAt})`);
      usageAt = f.n;
      // The last delta may ride on the finish chunk with the usage (Mistral does): that is still the end.
      const unfinished =
        frame.kind === 'chunk' && frame.choices.some((c) => c.finish_reason == null && carriesOutput(asObject(c.delta) ?? {}));
      if (unfinished)
        report(f.n, 'chat/usage-after-finish', 'usage on a chunk whose choice goes on: usage comes after every finish');
    },
    end() {},
  };
}
